/**
 * What every sub-port of the PostgreSQL store shares: the pool, the schema's statements and wake
 * channel, the id source, the time parameter, local wake delivery, and the one wrapper every
 * public method goes through (refused after `close()` and before the schema is current, errors
 * passed through `mapError`, so no driver error escapes).
 */
import { createStoreLifecycle, type StoreLifecycle } from '../shared/store-lifecycle.ts';
import type pg from 'pg';
import type { Clock } from '../../core/clock.ts';
import { SchemaVersionError, StoreUnavailableError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { buildAll, DB_NOW, queryRows } from './database.ts';
import { mapError } from './errors.ts';
import { quoteIdentifier } from './identifiers.ts';
import { assertKnownVersion, latestSchemaVersion, readSchemaVersion } from './migrate.ts';
import * as artifactRefsSql from './sql/artifact-refs.ts';
import * as auditSql from './sql/audit.ts';
import * as blobsSql from './sql/blobs.ts';
import * as cacheSql from './sql/cache.ts';
import * as jobsSql from './sql/jobs.ts';
import * as locksSql from './sql/locks.ts';
import * as operatorSql from './sql/operator.ts';
import * as publicationsSql from './sql/publications.ts';
import * as readsSql from './sql/reads.ts';
import * as requestsSql from './sql/requests.ts';
import * as retentionSql from './sql/retention.ts';
import * as statsSql from './sql/stats.ts';
import * as tokensSql from './sql/tokens.ts';
import * as versionsSql from './sql/versions.ts';

/** Builds the statements of a store whose tables live in `schema` (already validated), by sub-port. */
// The return type is inferred on purpose: it is the typed catalogue the sub-ports use.
export function buildStatements(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    jobs: buildAll(jobsSql, s),
    operator: buildAll(operatorSql, s),
    reads: buildAll(readsSql, s),
    cache: buildAll(cacheSql, s),
    publications: buildAll(publicationsSql, s),
    requests: buildAll(requestsSql, s),
    versions: buildAll(versionsSql, s),
    artifactRefs: buildAll(artifactRefsSql, s),
    audit: buildAll(auditSql, s),
    locks: buildAll(locksSql, s),
    stats: buildAll(statsSql, s),
    tokens: buildAll(tokensSql, s),
    retention: buildAll(retentionSql, s),
    blobs: buildAll(blobsSql, s),
  };
}

/** The statements of one store. */
export type Statements = ReturnType<typeof buildStatements>;

/** Shared state of one store instance. */
export interface PgContext extends StoreLifecycle {
  readonly pool: pg.Pool;
  /** The validated schema name. */
  readonly schema: string;
  /** The schema's LISTEN/NOTIFY channel. */
  readonly channel: string;
  readonly sql: Statements;
  readonly ids: IdGenerator;
  /**
   * The "now" parameter of every statement: the injected clock's time (tests), or null so that
   * the statement uses the database clock (production).
   */
  now(): number | null;
  /** Wakes this process's listeners for queues that got ready jobs; call after the commit. */
  wake(queues: Iterable<string>): void;
}

/** What {@link createContext} needs; `clock` is the test seam (see `index.ts`), undefined in production. */
export interface PgContextDeps {
  pool: pg.Pool;
  schema: string;
  channel: string;
  ids: IdGenerator;
  clock: Clock | undefined;
  deliverWakes: (queues: Iterable<string>) => void;
}

/** The checks every public method goes through, over one store's state (closed, schema current). */
/** Throws `SchemaVersionError` unless `schema` is at the version this code knows. */
async function checkSchema(pool: pg.Pool, schema: string): Promise<void> {
  const version = await readSchemaVersion(pool, schema);
  assertKnownVersion(schema, version);
  if (version < latestSchemaVersion()) {
    throw new SchemaVersionError(`postgres schema ${schema} is at version ${version}, older than ${latestSchemaVersion()}: call migrate() first`, {
      details: { schema, version, required: latestSchemaVersion() },
    });
  }
}

/** Builds the context of one store instance. */
export function createContext(deps: PgContextDeps): PgContext {
  const { clock } = deps;
  const lifecycle = createStoreLifecycle({
    checkSchema: () => checkSchema(deps.pool, deps.schema),
    mapError,
    closedError: () => new StoreUnavailableError('postgres store is closed'),
  });
  return {
    pool: deps.pool,
    schema: deps.schema,
    channel: deps.channel,
    sql: buildStatements(deps.schema),
    ids: deps.ids,
    now: clock === undefined ? () => null : () => clock.now(),
    wake: deps.deliverWakes,
    ...lifecycle,
  };
}

/** The store's clock: the injected one in tests, else the database's. */
export async function storeNow(ctx: PgContext): Promise<number> {
  const injected = ctx.now();
  if (injected !== null) return injected;
  const [row] = await queryRows<{ now: number }>(ctx.pool, DB_NOW, []);
  if (!row) throw new Error('the database returned no time');
  return row.now;
}
