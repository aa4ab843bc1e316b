/**
 * The reference Store: everything in process memory, for fast deterministic tests and as the
 * executable reading of the port's TSDoc. Each method runs one synchronous operation on the
 * state (so it is atomic by construction) and returns copies, never live records.
 */
import type { Clock } from '../../core/clock.ts';
import { StoreUnavailableError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import type { Store, StoreCapabilities, MigrationResult } from '../../core/ports/store.ts';
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
import { MemoryState } from './state.ts';
import { submitRuns } from './submit-runs.ts';
import { allocateVersion } from './version-counters.ts';

/** The memory state has no schema; one version keeps `migrate` honest about being idempotent. */
const SCHEMA_VERSION = 1;

const CAPABILITIES: StoreCapabilities = Object.freeze({
  name: 'memory',
  multiProcess: false,
  crossProcessWake: false,
});

/** Dependencies of the memory store; both are required here, defaults live in `index.ts`. */
export interface MemoryStoreDeps {
  clock: Clock;
  ids: IdGenerator;
}

function applyMigrations(state: MemoryState): MigrationResult {
  if (state.schemaVersion >= SCHEMA_VERSION) return { applied: [], version: state.schemaVersion };
  state.schemaVersion = SCHEMA_VERSION;
  return { applied: [SCHEMA_VERSION], version: SCHEMA_VERSION };
}

/** Creates a memory store over a fresh, empty state. */
export function buildMemoryStore(deps: MemoryStoreDeps): Store {
  const state = new MemoryState(deps.clock, deps.ids);
  let closed = false;

  /**
   * Runs one operation atomically: it is synchronous, so nothing interleaves. The result is
   * copied so callers can neither mutate the state nor see later changes.
   */
  const run = async <T>(op: () => T): Promise<T> => {
    if (closed) throw new StoreUnavailableError('memory store is closed');
    try {
      const result = op();
      state.flushWakes();
      return structuredClone(result);
    } catch (err) {
      // Operations validate before they mutate, so a throw leaves nothing to wake for.
      state.pendingWakes.clear();
      throw err;
    }
  };

  return {
    capabilities: CAPABILITIES,
    migrate: () => run(() => applyMigrations(state)),
    schemaVersion: () => run(() => ({ current: state.schemaVersion, latest: SCHEMA_VERSION })),
    now: () => run(() => state.clock.now()),
    jobs: {
      submit: (requests) => run(() => submitRuns(state, requests)),
      claim: (requests) => run(() => claimJobs(state, requests)),
      renew: (renewals) => run(() => renewLeases(state, renewals)),
      commit: (items) => run(() => commit(state, items)),
      release: (leases) => run(() => releaseJobs(state, leases)),
      reap: () => run(() => reapExpiredLeases(state)),
    },
    operator: {
      cancelRun: (runId, reason) => run(() => cancelRun(state, runId, reason)),
      resumeRun: (runId) => run(() => resumeRun(state, runId)),
      replayJob: (jobId) => run(() => replayJob(state, jobId)),
      setQueuePaused: (queue, paused) => run(() => setQueuePaused(state, queue, paused)),
      drainQueue: (queue) => run(() => drainQueue(state, queue)),
    },
    reads: {
      getRun: (runId) => run(() => getRun(state, runId)),
      listRuns: (query) => run(() => listRuns(state, query)),
      getJob: (jobId) => run(() => getJob(state, jobId)),
      listJobs: (query) => run(() => listJobs(state, query)),
      queueStats: () => run(() => queueStats(state)),
      readLedger: (runId) => run(() => readLedger(state, runId)),
    },
    cache: {
      acquire: (request) => run(() => acquireCacheEntry(state, request)),
      get: (cache, key) => run(() => getCacheEntry(state, cache, key)),
      complete: (request) => run(() => completeCacheEntry(state, request)),
      fail: (request) => run(() => failCacheEntry(state, request)),
      renew: (cache, key, token, leaseMs) => run(() => renewCacheLease(state, cache, key, token, leaseMs)),
      deleteExpired: (graceMs) => run(() => deleteExpiredCacheEntries(state, graceMs)),
    },
    publications: {
      get: (subjectId, profile) => run(() => getPublication(state, subjectId, profile)),
      list: (subjectId) => run(() => listPublications(state, subjectId)),
      delete: (subjectId, profiles) => run(() => deletePublications(state, subjectId, profiles)),
    },
    requests: {
      remember: (record) => run(() => rememberRequest(state, record)),
      get: (scope, key) => run(() => getRequest(state, scope, key)),
    },
    versions: {
      allocate: (scope, key) => run(() => allocateVersion(state, scope, key)),
    },
    artifactRefs: {
      list: () => run(() => listReferencedArtifacts(state)),
    },
    onWake: (listener) => state.wakeListeners.subscribe(listener),
    async close() {
      closed = true;
      state.wakeListeners.clear();
    },
  };
}
