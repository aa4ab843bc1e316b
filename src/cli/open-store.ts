/**
 * Opens the store the configuration selects, without migrating it. Each store module is
 * imported only when selected, so a SQLite-only process never loads `pg` and a PostgreSQL-only
 * host never loads the native SQLite binding.
 */
// Type-only: erased at run time, so it does not load the module (or pg) eagerly.
import type * as PostgresStoreModule from '../stores/postgres/index.ts';
import { StoreKind, type ResolvedStore } from '../config/schema.ts';
import { ConfigError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { Store } from '../core/ports/store.ts';

type PostgresModule = typeof PostgresStoreModule;

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** Handed to stores that log (PostgreSQL: pool errors, LISTEN reconnects). */
  logger: Logger;
}

/**
 * Opens (does not migrate) the selected store. SQLite's file is created if missing, its folder
 * is not (callers that may create stores make the folder first). Throws `StoreUnavailableError`
 * when the store cannot be opened, `ConfigError` when the driver is not installed.
 */
export async function openStore(store: ResolvedStore, options: OpenStoreOptions): Promise<Store> {
  if (store.kind === StoreKind.sqlite) {
    const { createSqliteStore } = await import('../stores/sqlite/index.ts');
    return createSqliteStore({ path: store.path });
  }
  const { createPostgresStore } = await importPostgres();
  return createPostgresStore({ connectionString: store.url, schema: store.schema, logger: options.logger });
}

/** The PostgreSQL store module; a missing `pg` becomes a configuration error saying what to install. */
async function importPostgres(): Promise<PostgresModule> {
  try {
    return await import('../stores/postgres/index.ts');
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new ConfigError([{ source: 'store', path: 'store.url', message: `the postgres store needs the pg package (npm install pg): ${(err as Error).message}` }], {
      cause: err,
    });
  }
}
