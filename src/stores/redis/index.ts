/**
 * The Redis store, for teams that already run Redis (for BullMQ, say): any number of API and
 * worker processes on any number of hosts share one Redis under one key prefix. Each port method
 * is one Lua script (routines/), claims take batches, commits are fenced by the lease inside the
 * script, wake-ups travel by pub/sub (a hint only), and lease time comes from Redis `TIME`.
 * Durability is the server's: see the README (AOF with `appendfsync always` loses no commit
 * acknowledged to kiln; `everysec` up to ~2 s of them on a power loss, or on a crash while a slow
 * disk delays the AOF).
 */
import { Redis } from 'ioredis';
import type { Clock } from '../../core/clock.ts';
import { systemClock } from '../../core/clock.ts';
import { ValidationError } from '../../core/errors.ts';
import { createIdGenerator, type IdGenerator } from '../../core/ids.ts';
import { silentLogger, type Logger } from '../../core/logger.ts';
import { buildRedisStore, type RedisStore } from './store.ts';
import { createWakeHub } from './wake-hub.ts';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** `redis://[:password@]host:6379[/db]` or `rediss://...` (any form ioredis accepts). */
  url: string;
  /**
   * Name of this store's key space: every key is `kiln:{<name>}:...`, so several deployments (or
   * tests) share one Redis without meeting. Must match `/^[A-Za-z0-9_.-]{1,64}$/`.
   * @default 'default'
   */
  name?: string;
  /** TEST SEAM — leave unset in production (see `PostgresStoreOptions.clock`). */
  clock?: Clock;
  /** Source of run/job ids and lease tokens. @default createIdGenerator(clock ?? systemClock) */
  ids?: IdGenerator;
  /** Where connection errors are reported. @default silentLogger */
  logger?: Logger;
}

/** Default of {@link RedisStoreOptions.name}. */
export const DEFAULT_STORE_NAME = 'default';

const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** The key prefix of a store name: a cluster hash tag keeps every key of one store in one slot. */
export function keyPrefix(name: string): string {
  return `kiln:{${name}}:`;
}

/**
 * Creates a Store over a Redis server. Connects in the background; call `migrate()` first:
 * other methods fail with `SchemaVersionError` until the layout is current. While the server is
 * unreachable every call fails within about a second with a retryable `StoreUnavailableError`,
 * and the connection comes back by itself.
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const name = options.name ?? DEFAULT_STORE_NAME;
  if (!NAME_PATTERN.test(name)) {
    throw new ValidationError(`redis store name must match ${String(NAME_PATTERN)}, got ${JSON.stringify(name)}`, { details: { name } });
  }
  const logger = options.logger ?? silentLogger;
  const redis = new Redis(options.url, {
    // Fail fast while the server is away (the caller retries as transient), reconnect forever.
    maxRetriesPerRequest: 2,
    retryStrategy: (times: number) => Math.min(50 * times, 500),
    connectTimeout: 2_000,
    commandTimeout: 10_000,
    // A script sent before a connection loss may have run: re-sending it could apply it twice
    // (a submit without idempotency key would make two runs). Its caller gets the error instead.
    autoResendUnfulfilledCommands: false,
  });
  redis.on('error', (err: Error) => logger.debug({ err: err.message }, 'redis connection error'));
  const prefix = keyPrefix(name);
  const ids = options.ids ?? createIdGenerator(options.clock ?? systemClock);
  const wakes = createWakeHub(redis, prefix, ids.token(), logger);
  return buildRedisStore({ redis, prefix, wakes, ids, clock: options.clock, logger });
}

export { mapError } from './errors.ts';
export { TimeSource, type RedisStore, type RedisCapabilities } from './store.ts';
