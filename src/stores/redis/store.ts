/**
 * The Redis Store: the root (capabilities, migrate, schemaVersion, now, onWake, close) and one
 * sub-port per file beside this one. Every method is one script (or one read) and goes through the
 * context's guard: refused after `close()` and before the layout is current, its errors passed
 * through `mapError`.
 */
import type { Redis } from 'ioredis';
import type { Clock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import type { Store, StoreCapabilities } from '../../core/ports/store.ts';
import { createArtifactRefsPort } from './artifact-refs.ts';
import { createAuditPort } from './audit.ts';
import { createBlobsPort } from './blobs.ts';
import { createCachePort } from './cache.ts';
import { createContext } from './context.ts';
import { mapError } from './errors.ts';
import { createJobsPort } from './jobs.ts';
import { createLocksPort } from './locks.ts';
import { applyMigrations, schemaVersionInfo } from './migrate.ts';
import { createOperatorPort } from './operator.ts';
import { createPublicationsPort } from './publications.ts';
import { createReadsPort } from './reads.ts';
import { createRequestsPort } from './requests.ts';
import { createRetentionPort } from './retention.ts';
import { createStatsPort } from './stats.ts';
import { createTokensPort } from './tokens.ts';
import { createVersionsPort } from './versions.ts';
import type { WakeHub } from './wake-hub.ts';

/** Where a store's time comes from (as for PostgreSQL: the server's clock in production). */
export const TimeSource = {
  /** Redis `TIME`: production. */
  server: 'server',
  /** An injected `Clock`, passed to every script: tests only. */
  injectedClock: 'injected_clock',
} as const;
export type TimeSource = (typeof TimeSource)[keyof typeof TimeSource];

/** The port's capabilities plus where this store's time comes from. */
export interface RedisCapabilities extends StoreCapabilities {
  readonly timeSource: TimeSource;
}

/** The Redis store: a {@link Store} whose capabilities say where its time comes from. */
export interface RedisStore extends Store {
  readonly capabilities: RedisCapabilities;
}

/** What {@link buildRedisStore} needs; defaults are applied by `index.ts`. */
export interface RedisStoreDeps {
  redis: Redis;
  prefix: string;
  wakes: WakeHub;
  ids: IdGenerator;
  clock: Clock | undefined;
  /** Where the connection the store opens itself (for submissions) reports its errors. */
  logger: Logger;
}

/** Builds the Store over a connection; `close()` closes it and the subscriber connection. */
export function buildRedisStore(deps: RedisStoreDeps): RedisStore {
  const { redis, prefix, wakes, clock } = deps;
  const ctx = createContext({ ...deps, deliverWakes: (queues) => wakes.publish(queues), deliverLocalWakes: (queues) => wakes.fireLocal(queues), wakeOrigin: wakes.origin });
  const serverNow = async (): Promise<number> => {
    if (clock !== undefined) return clock.now();
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  return {
    capabilities: Object.freeze({
      name: 'redis',
      multiProcess: true,
      crossProcessWake: true,
      timeSource: clock === undefined ? TimeSource.server : TimeSource.injectedClock,
    }),
    jobs: createJobsPort(ctx),
    operator: createOperatorPort(ctx),
    reads: createReadsPort(ctx),
    cache: createCachePort(ctx),
    publications: createPublicationsPort(ctx),
    requests: createRequestsPort(ctx),
    versions: createVersionsPort(ctx),
    artifactRefs: createArtifactRefsPort(ctx),
    audit: createAuditPort(ctx),
    locks: createLocksPort(ctx),
    stats: createStatsPort(ctx),
    tokens: createTokensPort(ctx),
    retention: createRetentionPort(ctx),
    blobs: createBlobsPort(ctx),
    migrate: ctx.guard(async () => {
      const result = await applyMigrations(redis, prefix, await serverNow());
      ctx.schemaMigrated();
      return result;
    }, false),
    schemaVersion: ctx.guard(() => schemaVersionInfo(redis, prefix), false),
    now: ctx.guard(serverNow, false),
    onWake: (listener) => wakes.subscribe(listener),
    async close() {
      if (!ctx.markClosed()) return;
      try {
        await wakes.close();
        await ctx.closeConnections();
      } catch (err) {
        throw mapError(err);
      }
    },
  };
}
