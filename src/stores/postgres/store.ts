/**
 * The PostgreSQL Store, built from the operation modules beside this file. Every method is one
 * transaction (most are one statement), refuses to run after `close()` and before the schema is
 * current, and passes anything thrown through `mapError`, so no driver error escapes.
 */
import type pg from 'pg';
import type { Clock } from '../../core/clock.ts';
import { StoreUnavailableError, SchemaVersionError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Store, StoreCapabilities } from '../../core/ports/store.ts';
import {
  acquireCacheEntry,
  completeCacheEntry,
  deleteExpiredCacheEntries,
  failCacheEntry,
  getCacheEntry,
  renewCacheLease,
} from './cache-entries.ts';
import { claimJobs } from './claim-jobs.ts';
import { commit } from './commits.ts';
import { createContext } from './context.ts';
import { mapError } from './errors.ts';
import { reapExpiredLeases, releaseJobs, renewLeases } from './leases.ts';
import { applyMigrations, assertKnownVersion, latestSchemaVersion, readSchemaVersion, schemaVersionInfo } from './migrate.ts';
import { cancelRun, drainQueue, replayJob, resumeRun, setQueuePaused } from './operator.ts';
import { deletePublications } from './publications.ts';
import {
  getJob,
  getPublication,
  getRun,
  listJobs,
  listPublications,
  listReferencedArtifacts,
  listRuns,
  queueStats,
  readLedger,
  storeNow,
} from './reads.ts';
import { getRequest, rememberRequest } from './request-records.ts';
import { buildStatements } from './statements.ts';
import { submitRuns } from './submit-runs.ts';
import { allocateVersion } from './version-counters.ts';
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
  const ctx = createContext({ ...deps, sql: buildStatements(schema), deliverWakes: (queues) => wakes.deliverLocal(queues) });
  let closed = false;
  let schemaCurrent = false;

  /** Checked once; until the schema is current every call fails with `SchemaVersionError`. */
  const requireCurrentSchema = async (): Promise<void> => {
    if (schemaCurrent) return;
    const version = await readSchemaVersion(pool, schema);
    assertKnownVersion(schema, version);
    if (version < latestSchemaVersion()) {
      throw new SchemaVersionError(`postgres schema ${schema} is at version ${version}, older than ${latestSchemaVersion()}: call migrate() first`, {
        details: { schema, version, required: latestSchemaVersion() },
      });
    }
    schemaCurrent = true;
  };
  /** An operation: refused after close, mapped errors; `migrated` ones need the current schema. */
  const op = <Args extends unknown[], Result>(body: (...args: Args) => Promise<Result>, migrated = true) => {
    return async (...args: Args): Promise<Result> => {
      if (closed) throw new StoreUnavailableError('postgres store is closed');
      try {
        if (migrated) await requireCurrentSchema();
        return await body(...args);
      } catch (err) {
        throw mapError(err);
      }
    };
  };

  return {
    capabilities: Object.freeze({
      name: 'postgres',
      multiProcess: true,
      crossProcessWake: true,
      timeSource: deps.clock === undefined ? TimeSource.database : TimeSource.injectedClock,
    }),
    migrate: op(async () => {
      const result = await applyMigrations(pool, schema, ctx.now());
      schemaCurrent = true;
      return result;
    }, false),
    schemaVersion: op(() => schemaVersionInfo(pool, schema), false),
    now: op(() => storeNow(ctx), false),
    jobs: {
      submit: op((requests) => submitRuns(ctx, requests)),
      claim: op((requests) => claimJobs(ctx, requests)),
      renew: op((renewals) => renewLeases(ctx, renewals)),
      commit: op((items) => commit(ctx, items)),
      release: op((leases) => releaseJobs(ctx, leases)),
      reap: op(() => reapExpiredLeases(ctx)),
    },
    operator: {
      cancelRun: op((runId, reason) => cancelRun(ctx, runId, reason)),
      resumeRun: op((runId) => resumeRun(ctx, runId)),
      replayJob: op((jobId) => replayJob(ctx, jobId)),
      setQueuePaused: op((queue, paused) => setQueuePaused(ctx, queue, paused)),
      drainQueue: op((queue) => drainQueue(ctx, queue)),
    },
    reads: {
      getRun: op((runId) => getRun(ctx, runId)),
      listRuns: op((query) => listRuns(ctx, query)),
      getJob: op((jobId) => getJob(ctx, jobId)),
      listJobs: op((query) => listJobs(ctx, query)),
      queueStats: op(() => queueStats(ctx)),
      readLedger: op((runId) => readLedger(ctx, runId)),
    },
    cache: {
      acquire: op((request) => acquireCacheEntry(ctx, request)),
      get: op((cache, key) => getCacheEntry(ctx, cache, key)),
      complete: op((request) => completeCacheEntry(ctx, request)),
      fail: op((request) => failCacheEntry(ctx, request)),
      renew: op((cache, key, token, leaseMs) => renewCacheLease(ctx, cache, key, token, leaseMs)),
      deleteExpired: op((graceMs) => deleteExpiredCacheEntries(ctx, graceMs)),
    },
    publications: {
      get: op((subjectId, profile) => getPublication(ctx, subjectId, profile)),
      list: op((subjectId) => listPublications(ctx, subjectId)),
      delete: op((subjectId, profiles) => deletePublications(ctx, subjectId, profiles)),
    },
    requests: {
      remember: op((record) => rememberRequest(ctx, record)),
      get: op((scope, key) => getRequest(ctx, scope, key)),
    },
    versions: {
      allocate: op((scope, key) => allocateVersion(ctx, scope, key)),
    },
    artifactRefs: {
      list: op(() => listReferencedArtifacts(ctx)),
    },
    onWake: (listener) => wakes.subscribe(listener),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await wakes.close();
        await pool.end();
      } catch (err) {
        throw mapError(err);
      }
    },
  };
}
