/**
 * The reference Backend: everything in process memory, for fast deterministic tests and as the
 * executable reading of the port's TSDoc. Each method runs one synchronous operation on the
 * store (so it is atomic by construction) and returns copies, never live records.
 */
import type { Clock } from '../../core/clock.ts';
import { BackendUnavailableError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Backend, BackendCapabilities, MigrationResult } from '../../core/ports.ts';
import {
  acquireCacheEntry,
  completeCacheEntry,
  deleteExpiredCacheEntries,
  failCacheEntry,
  getCacheEntry,
  renewCacheLease,
} from './cache-entries.ts';
import { commit } from './commits.ts';
import { claimJobs, reapExpiredLeases, releaseJobs, renewLeases } from './leases.ts';
import { cancelRun, drainQueue, replayJob, resumeRun, setQueuePaused } from './operator-actions.ts';
import { deletePublications, getPublication, listPublications } from './publications.ts';
import { getRun, getJob, listJobs, listRuns, queueStats, readLedger } from './queries.ts';
import { listReferencedArtifacts } from './referenced-artifacts.ts';
import { getRequest, rememberRequest } from './request-records.ts';
import { MemoryStore } from './store.ts';
import { submitRuns } from './submit-runs.ts';
import { allocateVersion } from './version-counters.ts';

/** The memory store has no schema; one version keeps `migrate` honest about being idempotent. */
const SCHEMA_VERSION = 1;

const CAPABILITIES: BackendCapabilities = Object.freeze({
  name: 'memory',
  multiProcess: false,
  crossProcessWake: false,
});

/** Dependencies of the memory backend; both are required here, defaults live in `index.ts`. */
export interface MemoryBackendDeps {
  clock: Clock;
  ids: IdGenerator;
}

function applyMigrations(store: MemoryStore): MigrationResult {
  if (store.schemaVersion >= SCHEMA_VERSION) return { applied: [], version: store.schemaVersion };
  store.schemaVersion = SCHEMA_VERSION;
  return { applied: [SCHEMA_VERSION], version: SCHEMA_VERSION };
}

/** Creates a memory backend over a fresh, empty store. */
export function buildMemoryBackend(deps: MemoryBackendDeps): Backend {
  const store = new MemoryStore(deps.clock, deps.ids);
  let closed = false;

  /**
   * Runs one operation atomically: it is synchronous, so nothing interleaves. The result is
   * copied so callers can neither mutate the store nor see later changes.
   */
  const run = async <T>(op: () => T): Promise<T> => {
    if (closed) throw new BackendUnavailableError('memory backend is closed');
    try {
      const result = op();
      store.flushWakes();
      return structuredClone(result);
    } catch (err) {
      // Operations validate before they mutate, so a throw leaves nothing to wake for.
      store.pendingWakes.clear();
      throw err;
    }
  };

  return {
    capabilities: CAPABILITIES,
    migrate: () => run(() => applyMigrations(store)),
    schemaVersion: () => run(() => ({ current: store.schemaVersion, latest: SCHEMA_VERSION })),
    now: () => run(() => store.clock.now()),
    submitRuns: (requests) => run(() => submitRuns(store, requests)),
    claimJobs: (requests) => run(() => claimJobs(store, requests)),
    renewLeases: (renewals) => run(() => renewLeases(store, renewals)),
    commit: (items) => run(() => commit(store, items)),
    releaseJobs: (leases) => run(() => releaseJobs(store, leases)),
    reapExpiredLeases: () => run(() => reapExpiredLeases(store)),
    cancelRun: (runId, reason) => run(() => cancelRun(store, runId, reason)),
    resumeRun: (runId) => run(() => resumeRun(store, runId)),
    replayJob: (jobId) => run(() => replayJob(store, jobId)),
    setQueuePaused: (queue, paused) => run(() => setQueuePaused(store, queue, paused)),
    drainQueue: (queue) => run(() => drainQueue(store, queue)),
    getRun: (runId) => run(() => getRun(store, runId)),
    listRuns: (query) => run(() => listRuns(store, query)),
    getJob: (jobId) => run(() => getJob(store, jobId)),
    listJobs: (query) => run(() => listJobs(store, query)),
    queueStats: () => run(() => queueStats(store)),
    readLedger: (runId) => run(() => readLedger(store, runId)),
    getPublication: (subjectId, profile) => run(() => getPublication(store, subjectId, profile)),
    listPublications: (subjectId) => run(() => listPublications(store, subjectId)),
    deletePublications: (subjectId, profiles) => run(() => deletePublications(store, subjectId, profiles)),
    allocateVersion: (scope, key) => run(() => allocateVersion(store, scope, key)),
    listReferencedArtifacts: () => run(() => listReferencedArtifacts(store)),
    acquireCacheEntry: (request) => run(() => acquireCacheEntry(store, request)),
    getCacheEntry: (cache, key) => run(() => getCacheEntry(store, cache, key)),
    completeCacheEntry: (request) => run(() => completeCacheEntry(store, request)),
    failCacheEntry: (request) => run(() => failCacheEntry(store, request)),
    renewCacheLease: (cache, key, token, leaseMs) => run(() => renewCacheLease(store, cache, key, token, leaseMs)),
    deleteExpiredCacheEntries: (graceMs) => run(() => deleteExpiredCacheEntries(store, graceMs)),
    rememberRequest: (record) => run(() => rememberRequest(store, record)),
    getRequest: (scope, key) => run(() => getRequest(store, scope, key)),
    onWake: (listener) => store.wakeListeners.subscribe(listener),
    async close() {
      closed = true;
      store.wakeListeners.clear();
    },
  };
}
