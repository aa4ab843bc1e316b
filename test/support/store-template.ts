/**
 * The store template: the files every store folder under src/stores/ has, so stores read side by
 * side and a new store starts from the same list. `templateProblems` compares one folder with it.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The sub-ports of `Store` (src/core/ports/), as file names: one file per sub-port in every store. */
export const SUB_PORT_FILES = [
  'jobs.ts',
  'operator.ts',
  'reads.ts',
  'cache.ts',
  'publications.ts',
  'requests.ts',
  'versions.ts',
  'artifact-refs.ts',
  'audit.ts',
  'locks.ts',
  'stats.ts',
  'tokens.ts',
  'retention.ts',
  'blobs.ts',
] as const;

/** What every store folder holds, whatever its engine. */
export const TEMPLATE_FILES = [
  /** `create<Name>Store`: options, defaults, then `store.ts`. */
  'index.ts',
  /** Wires the sub-ports into one `Store` (a few lines). */
  'store.ts',
  /** `mapError`: driver errors to kiln errors, at the edge. */
  'errors.ts',
  /** `migrate` and `schemaVersion`. */
  'migrate.ts',
  /** Stored shapes to domain records and back. */
  'rows.ts',
  ...SUB_PORT_FILES,
] as const;

/**
 * Kinds of store: SQL stores also keep their statements and migrations in the template's places;
 * script stores (Redis) keep their server-side scripts in `routines/`.
 */
export const StoreKind = { memory: 'memory', sql: 'sql', script: 'script' } as const;
export type StoreKind = (typeof StoreKind)[keyof typeof StoreKind];

/** Sub-folders a store may have: SQL text, migrations, routines, and helpers of one sub-port each. */
const FOLDERS_ALLOWED = new Set(['sql', 'migrations', 'routines', ...SUB_PORT_FILES.map((f) => f.replace(/\.ts$/, ''))]);

function list(dir: string): { files: Set<string>; folders: string[] } {
  const entries = readdirSync(dir, { withFileTypes: true });
  return {
    files: new Set(entries.filter((e) => e.isFile()).map((e) => e.name)),
    folders: entries.filter((e) => e.isDirectory()).map((e) => e.name),
  };
}

/**
 * Every way `dir` departs from the template, one line each (empty when it follows it): a missing
 * template file; for SQL stores, a missing `sql/<sub-port>.ts` or `migrations/`; a sub-folder that
 * is neither `sql`, `migrations`, `routines` nor named after a sub-port; for script stores, a
 * missing `routines/`.
 */
export function templateProblems(dir: string, kind: StoreKind): string[] {
  const problems: string[] = [];
  const { files, folders } = list(dir);
  for (const file of TEMPLATE_FILES) if (!files.has(file)) problems.push(`missing ${file}`);
  for (const folder of folders) if (!FOLDERS_ALLOWED.has(folder)) problems.push(`unexpected folder ${folder}/`);
  if (kind === StoreKind.script && !folders.includes('routines')) problems.push('missing routines/');
  if (kind === StoreKind.sql) {
    if (!folders.includes('migrations')) problems.push('missing migrations/');
    const sqlFiles = folders.includes('sql') ? list(join(dir, 'sql')).files : new Set<string>();
    for (const file of SUB_PORT_FILES) if (!sqlFiles.has(file)) problems.push(`missing sql/${file}`);
  }
  return problems;
}
