/**
 * The PostgreSQL store, for many machines: any number of API and worker processes on any
 * number of hosts share one database (one schema). Claims take `FOR UPDATE SKIP LOCKED` batches,
 * commits are one server-side call per batch, wake-ups travel by LISTEN/NOTIFY, and lease time
 * comes from the database clock.
 */
import type { Clock } from '../../core/clock.ts';
import { systemClock } from '../../core/clock.ts';
import { ValidationError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { createIdGenerator } from '../../core/ids.ts';
import { silentLogger, type Logger } from '../../core/logger.ts';
import { buildPostgresStore, type PostgresStore } from './store.ts';
import { DEFAULT_SCHEMA, validateSchemaName, wakeChannel } from './identifiers.ts';
import { clientConfig, createPool } from './pool.ts';
import { createWakeHub } from './wake-hub.ts';

/** Options of {@link createPostgresStore}. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:5432/db` (any form `pg` accepts). */
  connectionString: string;
  /**
   * Schema holding kiln's tables, created by `migrate()` if missing; several kiln deployments
   * (or tests) can share one database in different schemas. Must match `/^[a-z_][a-z0-9_]{0,62}$/`.
   * @default 'kiln'
   */
  schema?: string;
  /** Most connections the pool opens (the LISTEN connection comes on top). @default 10 */
  poolSize?: number;
  /**
   * TEST SEAM — leave unset in production. Without it every time value (claims, lease expiry,
   * commits, timestamps) comes from the database clock, never from a worker's clock, so hosts
   * with skewed clocks agree. With it, `clock.now()` is passed to every statement instead, so a
   * test can move time with a fake clock rather than sleep; `capabilities.timeSource` then reads
   * `injected_clock`.
   */
  clock?: Clock;
  /** Source of run/job ids and lease tokens. @default createIdGenerator(clock ?? systemClock) */
  ids?: IdGenerator;
  /** Where pool errors and LISTEN reconnects are reported. @default silentLogger */
  logger?: Logger;
}

/** Default of {@link PostgresStoreOptions.poolSize}. */
export const DEFAULT_POOL_SIZE = 10;

/**
 * Creates a Store over a PostgreSQL database. Nothing connects yet: call `migrate()` first;
 * other methods fail with `SchemaVersionError` until the schema is current. Throws
 * `ValidationError` for an unusable schema name or pool size. The pool survives server restarts
 * (calls during the outage fail with a retryable `StoreUnavailableError`).
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const schema = validateSchemaName(options.schema ?? DEFAULT_SCHEMA);
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  if (!Number.isSafeInteger(poolSize) || poolSize < 1) {
    throw new ValidationError(`postgres poolSize must be a positive integer, got ${String(poolSize)}`, { details: { poolSize } });
  }
  const logger = options.logger ?? silentLogger;
  const channel = wakeChannel(schema);
  const { pool, ownPids } = createPool({ connectionString: options.connectionString, max: poolSize, logger });
  const wakes = createWakeHub({ config: clientConfig(options.connectionString), channel, ownPids, logger });
  return buildPostgresStore({
    pool,
    schema,
    channel,
    wakes,
    ids: options.ids ?? createIdGenerator(options.clock ?? systemClock),
    clock: options.clock,
  });
}

export { mapError } from './errors.ts';
export { TimeSource, type PostgresStore, type PostgresCapabilities } from './store.ts';
export { DEFAULT_SCHEMA } from './identifiers.ts';
