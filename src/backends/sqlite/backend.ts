/**
 * The SQLite Backend: every method is one transaction on a shared file (BEGIN IMMEDIATE for
 * anything that writes, so read-modify-write is serialised across processes), built from the
 * operation modules beside this file. Driver errors never escape (see `errors.ts`).
 */
import type { Clock } from '../../core/clock.ts';
import { BackendUnavailableError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Backend, BackendCapabilities, SubmitRunRequest } from '../../core/ports.ts';
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

const CAPABILITIES: BackendCapabilities = Object.freeze({
  name: 'sqlite',
  multiProcess: true,
  // Wakes are in-process only; other processes find new work by polling.
  crossProcessWake: false,
});

/** What {@link buildSqliteBackend} needs; defaults are applied by `index.ts`. */
export interface SqliteBackendDeps {
  db: SqliteDatabase;
  clock: Clock;
  ids: IdGenerator;
}

/** Builds the Backend over an open connection; `close()` closes that connection. */
export function buildSqliteBackend(deps: SqliteBackendDeps): Backend {
  const ctx = createContext(deps.db, deps.clock, deps.ids);
  let closed = false;
  /** Operations refuse to run after close with a kiln error, not a driver TypeError. */
  const open = <Args extends unknown[], Result>(op: (...args: Args) => Promise<Result>) => {
    return async (...args: Args): Promise<Result> => {
      if (closed) throw new BackendUnavailableError('sqlite backend is closed');
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
    submitRuns: open(async (requests) => (requests.length === 0 ? [] : submitBatch(requests))),
    claimJobs: write((requests) => claimJobs(ctx, requests)),
    renewLeases: write((renewals) => renewLeases(ctx, renewals)),
    commit: write((items) => commit(ctx, items)),
    releaseJobs: write((leases) => releaseJobs(ctx, leases)),
    reapExpiredLeases: write(() => reapExpiredLeases(ctx)),
    cancelRun: write((runId, reason) => cancelRun(ctx, runId, reason)),
    resumeRun: write((runId) => resumeRun(ctx, runId)),
    replayJob: write((jobId) => replayJob(ctx, jobId)),
    setQueuePaused: write((queue, paused) => setQueuePaused(ctx, queue, paused)),
    drainQueue: write((queue) => drainQueue(ctx, queue)),
    getRun: read((runId) => getRun(ctx, runId)),
    listRuns: read((query) => listRuns(ctx, query)),
    getJob: read((jobId) => getJob(ctx, jobId)),
    listJobs: read((query) => listJobs(ctx, query)),
    queueStats: read(() => queueStats(ctx)),
    readLedger: read((runId) => readLedger(ctx, runId)),
    getPublication: read((subjectId, profile) => getPublication(ctx, subjectId, profile)),
    listPublications: read((subjectId) => listPublications(ctx, subjectId)),
    deletePublications: write((subjectId, profiles) => deletePublications(ctx, subjectId, profiles)),
    allocateVersion: write((scope, key) => allocateVersion(ctx, scope, key)),
    listReferencedArtifacts: read(() => listReferencedArtifacts(ctx)),
    acquireCacheEntry: write((request) => acquireCacheEntry(ctx, request)),
    getCacheEntry: read((cache, key) => getCacheEntry(ctx, cache, key)),
    completeCacheEntry: write((request) => completeCacheEntry(ctx, request)),
    failCacheEntry: write((request) => failCacheEntry(ctx, request)),
    renewCacheLease: write((cache, key, token, leaseMs) => renewCacheLease(ctx, cache, key, token, leaseMs)),
    deleteExpiredCacheEntries: write((graceMs) => deleteExpiredCacheEntries(ctx, graceMs)),
    rememberRequest: write((record) => rememberRequest(ctx, record)),
    getRequest: read((scope, key) => getRequest(ctx, scope, key)),
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
