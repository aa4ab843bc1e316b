/**
 * The PostgreSQL Backend, built from the operation modules beside this file. Every method is one
 * transaction (most are one statement), refuses to run after `close()` and before the schema is
 * current, and passes anything thrown through `mapError`, so no driver error escapes.
 */
import type pg from 'pg';
import type { Clock } from '../../core/clock.ts';
import { BackendUnavailableError, SchemaVersionError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Backend, BackendCapabilities } from '../../core/ports.ts';
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

/** Where a backend's time comes from. */
export const TimeSource = {
  /** The database clock (`now()`): production. */
  database: 'database',
  /** An injected `Clock`, passed to every statement as a parameter: tests only. */
  injectedClock: 'injected_clock',
} as const;
export type TimeSource = (typeof TimeSource)[keyof typeof TimeSource];

/** The port's capabilities plus where this backend's time comes from. */
export interface PostgresCapabilities extends BackendCapabilities {
  readonly timeSource: TimeSource;
}

/** The PostgreSQL backend: a {@link Backend} whose capabilities say where its time comes from. */
export interface PostgresBackend extends Backend {
  readonly capabilities: PostgresCapabilities;
}

/** What {@link buildPostgresBackend} needs; defaults are applied by `index.ts`. */
export interface PostgresBackendDeps {
  pool: pg.Pool;
  schema: string;
  channel: string;
  wakes: WakeHub;
  ids: IdGenerator;
  clock: Clock | undefined;
}

/** Builds the Backend over a pool; `close()` closes the pool and the LISTEN connection. */
export function buildPostgresBackend(deps: PostgresBackendDeps): PostgresBackend {
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
      if (closed) throw new BackendUnavailableError('postgres backend is closed');
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
    submitRuns: op((requests) => submitRuns(ctx, requests)),
    claimJobs: op((requests) => claimJobs(ctx, requests)),
    renewLeases: op((renewals) => renewLeases(ctx, renewals)),
    commit: op((items) => commit(ctx, items)),
    releaseJobs: op((leases) => releaseJobs(ctx, leases)),
    reapExpiredLeases: op(() => reapExpiredLeases(ctx)),
    cancelRun: op((runId, reason) => cancelRun(ctx, runId, reason)),
    resumeRun: op((runId) => resumeRun(ctx, runId)),
    replayJob: op((jobId) => replayJob(ctx, jobId)),
    setQueuePaused: op((queue, paused) => setQueuePaused(ctx, queue, paused)),
    drainQueue: op((queue) => drainQueue(ctx, queue)),
    getRun: op((runId) => getRun(ctx, runId)),
    listRuns: op((query) => listRuns(ctx, query)),
    getJob: op((jobId) => getJob(ctx, jobId)),
    listJobs: op((query) => listJobs(ctx, query)),
    queueStats: op(() => queueStats(ctx)),
    readLedger: op((runId) => readLedger(ctx, runId)),
    getPublication: op((subjectId, profile) => getPublication(ctx, subjectId, profile)),
    listPublications: op((subjectId) => listPublications(ctx, subjectId)),
    deletePublications: op((subjectId, profiles) => deletePublications(ctx, subjectId, profiles)),
    allocateVersion: op((scope, key) => allocateVersion(ctx, scope, key)),
    listReferencedArtifacts: op(() => listReferencedArtifacts(ctx)),
    acquireCacheEntry: op((request) => acquireCacheEntry(ctx, request)),
    getCacheEntry: op((cache, key) => getCacheEntry(ctx, cache, key)),
    completeCacheEntry: op((request) => completeCacheEntry(ctx, request)),
    failCacheEntry: op((request) => failCacheEntry(ctx, request)),
    renewCacheLease: op((cache, key, token, leaseMs) => renewCacheLease(ctx, cache, key, token, leaseMs)),
    deleteExpiredCacheEntries: op((graceMs) => deleteExpiredCacheEntries(ctx, graceMs)),
    rememberRequest: op((record) => rememberRequest(ctx, record)),
    getRequest: op((scope, key) => getRequest(ctx, scope, key)),
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
