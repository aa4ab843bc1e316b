/**
 * The SQLite Store: every method is one transaction on a shared file (BEGIN IMMEDIATE for
 * anything that writes, so read-modify-write is serialised across processes), built from the
 * operation modules beside this file. Driver errors never escape (see `errors.ts`).
 */
import type { Clock } from '../../core/clock.ts';
import { StoreUnavailableError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { SubmitRunRequest } from '../../core/ports/jobs.ts';
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
import type { SqliteDatabase } from './connection.ts';
import { createContext, readOperation, writeOperation } from './context.ts';
import { mapError } from './errors.ts';
import { reapExpiredLeases, releaseJobs, renewLeases } from './leases.ts';
import { applyMigrations, latestSchemaVersion, readSchemaVersion } from './migrate.ts';
import { cancelRun, drainQueue, replayJob, resumeRun, setQueuePaused } from './operator.ts';
import { deletePublications, getPublication, listPublications } from './publications.ts';
import { getJob, getRun, listJobs, listRuns, queueStats, readLedger } from './reads.ts';
import { listReferencedArtifacts } from './referenced-artifacts.ts';
import { getRequest, rememberRequest } from './request-records.ts';
import { submitRuns } from './submit-runs.ts';
import { allocateVersion } from './version-counters.ts';

const CAPABILITIES: StoreCapabilities = Object.freeze({
  name: 'sqlite',
  multiProcess: true,
  // Wakes are in-process only; other processes find new work by polling.
  crossProcessWake: false,
});

/** What {@link buildSqliteStore} needs; defaults are applied by `index.ts`. */
export interface SqliteStoreDeps {
  db: SqliteDatabase;
  clock: Clock;
  ids: IdGenerator;
}

/** Builds the Store over an open connection; `close()` closes that connection. */
export function buildSqliteStore(deps: SqliteStoreDeps): Store {
  const ctx = createContext(deps.db, deps.clock, deps.ids);
  let closed = false;
  /** Operations refuse to run after close with a kiln error, not a driver TypeError. */
  const open = <Args extends unknown[], Result>(op: (...args: Args) => Promise<Result>) => {
    return async (...args: Args): Promise<Result> => {
      if (closed) throw new StoreUnavailableError('sqlite store is closed');
      return op(...args);
    };
  };
  const write = <Args extends unknown[], Result>(body: (...args: Args) => Result) => open(writeOperation(ctx, body));
  // An empty batch needs no transaction (and so no write lock).
  const submitBatch = writeOperation(ctx, (requests: readonly SubmitRunRequest[]) => submitRuns(ctx, requests));
  const read = <Args extends unknown[], Result>(body: (...args: Args) => Result) => open(readOperation(ctx, body));

  return {
    capabilities: CAPABILITIES,
    migrate: open(async () => {
      try {
        return applyMigrations(deps.db, deps.clock.now());
      } catch (err) {
        throw mapError(err);
      }
    }),
    // A plain read outside any transaction: it must work on a store that was never migrated.
    schemaVersion: open(async () => {
      try {
        return { current: readSchemaVersion(deps.db), latest: latestSchemaVersion() };
      } catch (err) {
        throw mapError(err);
      }
    }),
    now: open(async () => deps.clock.now()),
    jobs: {
      submit: open(async (requests) => (requests.length === 0 ? [] : submitBatch(requests))),
      claim: write((requests) => claimJobs(ctx, requests)),
      renew: write((renewals) => renewLeases(ctx, renewals)),
      commit: write((items) => commit(ctx, items)),
      release: write((leases) => releaseJobs(ctx, leases)),
      reap: write(() => reapExpiredLeases(ctx)),
    },
    operator: {
      cancelRun: write((runId, reason) => cancelRun(ctx, runId, reason)),
      resumeRun: write((runId) => resumeRun(ctx, runId)),
      replayJob: write((jobId) => replayJob(ctx, jobId)),
      setQueuePaused: write((queue, paused) => setQueuePaused(ctx, queue, paused)),
      drainQueue: write((queue) => drainQueue(ctx, queue)),
    },
    reads: {
      getRun: read((runId) => getRun(ctx, runId)),
      listRuns: read((query) => listRuns(ctx, query)),
      getJob: read((jobId) => getJob(ctx, jobId)),
      listJobs: read((query) => listJobs(ctx, query)),
      queueStats: read(() => queueStats(ctx)),
      readLedger: read((runId) => readLedger(ctx, runId)),
    },
    cache: {
      acquire: write((request) => acquireCacheEntry(ctx, request)),
      get: read((cache, key) => getCacheEntry(ctx, cache, key)),
      complete: write((request) => completeCacheEntry(ctx, request)),
      fail: write((request) => failCacheEntry(ctx, request)),
      renew: write((cache, key, token, leaseMs) => renewCacheLease(ctx, cache, key, token, leaseMs)),
      deleteExpired: write((graceMs) => deleteExpiredCacheEntries(ctx, graceMs)),
    },
    publications: {
      get: read((subjectId, profile) => getPublication(ctx, subjectId, profile)),
      list: read((subjectId) => listPublications(ctx, subjectId)),
      delete: write((subjectId, profiles) => deletePublications(ctx, subjectId, profiles)),
    },
    requests: {
      remember: write((record) => rememberRequest(ctx, record)),
      get: read((scope, key) => getRequest(ctx, scope, key)),
    },
    versions: {
      allocate: write((scope, key) => allocateVersion(ctx, scope, key)),
    },
    artifactRefs: {
      list: read(() => listReferencedArtifacts(ctx)),
    },
    onWake: (listener) => ctx.onWake(listener),
    async close() {
      if (closed) return;
      closed = true;
      try {
        deps.db.close();
      } catch (err) {
        throw mapError(err);
      }
    },
  };
}
