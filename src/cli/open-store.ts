/**
 * Opens the store the configuration selects, without migrating it. Each store module is
 * imported only when selected, so a SQLite-only process never loads `pg` or `ioredis`, and a
 * PostgreSQL or Redis host never loads the native SQLite binding.
 */
// Type-only: erased at run time, so they do not load the modules (or their drivers) eagerly.
import type * as PostgresStoreModule from '../stores/postgres/index.ts';
import type * as RedisStoreModule from '../stores/redis/index.ts';
import { StoreKind, type ResolvedStore } from '../config/schema.ts';
import { ConfigError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { Store } from '../core/ports/store.ts';

type PostgresModule = typeof PostgresStoreModule;
type RedisModule = typeof RedisStoreModule;

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** Handed to stores that log (PostgreSQL: pool errors, LISTEN reconnects; Redis: connection errors). */
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
  if (store.kind === StoreKind.redis) {
    const { createRedisStore } = await importDriverStore<RedisModule>(() => import('../stores/redis/index.ts'), 'redis', 'ioredis');
    return createRedisStore({ url: store.url, name: store.name, logger: options.logger });
  }
  const { createPostgresStore } = await importDriverStore<PostgresModule>(() => import('../stores/postgres/index.ts'), 'postgres', 'pg');
  return createPostgresStore({ connectionString: store.url, schema: store.schema, logger: options.logger });
}

/** A store module; a missing driver package becomes a configuration error saying what to install. */
async function importDriverStore<M>(load: () => Promise<M>, store: string, driver: string): Promise<M> {
  try {
    return await load();
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new ConfigError([{ source: 'store', path: 'store.url', message: `the ${store} store needs the ${driver} package (npm install ${driver}): ${(err as Error).message}` }], {
      cause: err,
    });
  }
}
