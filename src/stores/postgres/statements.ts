/**
 * Every named statement of the store, built once per store for its schema (the schema is
 * part of the SQL text: identifiers cannot be parameters). The SQL lives in `queries/`, one
 * exported builder per statement.
 */
import type { Statement } from './database.ts';
import { quoteIdentifier } from './identifiers.ts';
import * as artifactRefs from './queries/artifact-refs.ts';
import * as cache from './queries/cache.ts';
import * as claim from './queries/claim.ts';
import * as jobs from './queries/jobs.ts';
import * as publications from './queries/publications.ts';
import * as requests from './queries/requests.ts';
import * as runs from './queries/runs.ts';
import * as versionCounters from './queries/version-counters.ts';

/** Statement builders by name, as a `queries/` module exports them. */
type Builders = Record<string, (s: string) => Statement>;

/** The statements of a builder module, by the same names. */
type Built<T extends Builders> = { readonly [K in keyof T]: Statement };

function buildAll<T extends Builders>(builders: T, s: string): Built<T> {
  return Object.fromEntries(Object.entries(builders).map(([name, build]) => [name, build(s)])) as Built<T>;
}

/** Builds the statements of a store whose tables live in `schema` (already validated). */
// The return type is inferred on purpose: it is the typed catalogue the operations use.
export function buildStatements(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    ...buildAll(claim, s),
    ...buildAll(runs, s),
    ...buildAll(jobs, s),
    ...buildAll(cache, s),
    ...buildAll(publications, s),
    ...buildAll(requests, s),
    ...buildAll(versionCounters, s),
    ...buildAll(artifactRefs, s),
  };
}

/** The statements of one store. */
export type Statements = ReturnType<typeof buildStatements>;
