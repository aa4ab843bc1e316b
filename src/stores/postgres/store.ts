/**
 * The PostgreSQL Store: the root (capabilities, migrate, schemaVersion, now, onWake, close) and
 * one sub-port per file beside this one. Every method is one transaction (most are one
 * statement) and goes through the context's guard: refused after `close()` and before the schema
 * is current, its errors passed through `mapError`.
 */
import type pg from 'pg';
import type { Clock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Store, StoreCapabilities } from '../../core/ports/store.ts';
import { createArtifactRefsPort } from './artifact-refs.ts';
import { createAuditPort } from './audit.ts';
import { createBlobsPort } from './blobs.ts';
import { createCachePort } from './cache.ts';
import { createContext, storeNow } from './context.ts';
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

/** Where a store's time comes from. */
export const TimeSource = {
  /** The database clock (`now()`): production. */
  database: 'database',
  /** An injected `Clock`, passed to every statement as a parameter: tests only. */
  injectedClock: 'injected_clock',
} as const;
export type TimeSource = (typeof TimeSource)[keyof typeof TimeSource];

/** The port's capabilities plus where this store's time comes from. */
export interface PostgresCapabilities extends StoreCapabilities {
  readonly timeSource: TimeSource;
}

/** The PostgreSQL store: a {@link Store} whose capabilities say where its time comes from. */
export interface PostgresStore extends Store {
  readonly capabilities: PostgresCapabilities;
}

/** What {@link buildPostgresStore} needs; defaults are applied by `index.ts`. */
export interface PostgresStoreDeps {
  pool: pg.Pool;
  schema: string;
  channel: string;
  wakes: WakeHub;
  ids: IdGenerator;
  clock: Clock | undefined;
}

/** Builds the Store over a pool; `close()` closes the pool and the LISTEN connection. */
export function buildPostgresStore(deps: PostgresStoreDeps): PostgresStore {
  const { pool, schema, wakes } = deps;
  const ctx = createContext({ ...deps, deliverWakes: (queues) => wakes.deliverLocal(queues) });
  return {
    capabilities: Object.freeze({
      name: 'postgres',
      multiProcess: true,
      crossProcessWake: true,
      timeSource: deps.clock === undefined ? TimeSource.database : TimeSource.injectedClock,
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
      const result = await applyMigrations(pool, schema, ctx.now());
      ctx.schemaMigrated();
      return result;
    }, false),
    schemaVersion: ctx.guard(() => schemaVersionInfo(pool, schema), false),
    now: ctx.guard(() => storeNow(ctx), false),
    onWake: (listener) => wakes.subscribe(listener),
    async close() {
      if (!ctx.markClosed()) return;
      try {
        await wakes.close();
        await pool.end();
      } catch (err) {
        throw mapError(err);
      }
    },
  };
}
