/**
 * Engine test harness: a memory store on a fake clock, an in-memory artifact stand-in is not
 * needed (the engine only passes the store through), and an observer that records every event.
 */
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { RunStatus } from '../../src/core/model.ts';
import type { EngineObserver, StageExecution } from '../../src/core/observer.ts';
import type { PipelineDefinition } from '../../src/core/pipeline/define-pipeline.ts';
import type { ArtifactStore } from '../../src/core/ports/artifact-store.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln, PolicyOverrides } from '../../src/engine/kiln-types.ts';
import type { AdmissionLimits } from '../../src/engine/admission.ts';

/** Every event the engine reported. */
export interface Recorded {
  executions: StageExecution[];
  skips: string[];
  redeliveries: Record<string, number>;
  runStatuses: { pipeline: string; status: RunStatus }[];
  abandoned: string[];
  orphanedTemps: number;
  /** `<cache>:<result>` per cache lookup, in order. */
  cacheRequests: string[];
  cacheBuilds: string[];
  publishPrevented: number;
  /** `<cache>:<hit|miss>` per local (per-process LRU) lookup, in order. */
  localCacheRequests: string[];
  /** `<pipeline>.<stage>` per lock wait, in order. */
  lockWaits: string[];
  /** Wait (ms) of each lock acquisition, in order. */
  lockAcquiredWaitMs: number[];
  staleLocksReaped: number;
  /** `<pipeline>:<status>:<ms>` per finished run. */
  runsFinished: string[];
  dedupHits: number;
  /** Runs refused by admission, by code. */
  refused: Record<string, number>;
  /** Claims per queue. */
  claimed: Record<string, number>;
  timeouts: string[];
  heartbeatLosses: string[];
  artifactWriteFailures: number;
  /** `<pipeline>:<profile>` per requested publication. */
  publicationsRequested: string[];
}

/** An observer that records into {@link Recorded}. */
export function createRecorder(): { observer: EngineObserver; recorded: Recorded } {
  const recorded: Recorded = {
    executions: [],
    skips: [],
    redeliveries: {},
    runStatuses: [],
    abandoned: [],
    orphanedTemps: 0,
    cacheRequests: [],
    cacheBuilds: [],
    publishPrevented: 0,
    localCacheRequests: [],
    lockWaits: [],
    lockAcquiredWaitMs: [],
    staleLocksReaped: 0,
    runsFinished: [],
    dedupHits: 0,
    refused: {},
    claimed: {},
    timeouts: [],
    heartbeatLosses: [],
    artifactWriteFailures: 0,
    publicationsRequested: [],
  };
  const observer: EngineObserver = {
    stageExecuted: (e) => recorded.executions.push(e),
    idempotentSkip: (p, s) => recorded.skips.push(`${p}.${s}`),
    redelivered: (q, n) => (recorded.redeliveries[q] = (recorded.redeliveries[q] ?? 0) + n),
    runStatus: (pipeline, status) => recorded.runStatuses.push({ pipeline, status }),
    handlerAbandoned: (p, s) => recorded.abandoned.push(`${p}.${s}`),
    orphanedTempsCollected: (n) => (recorded.orphanedTemps += n),
    cacheRequest: (cache, result) => recorded.cacheRequests.push(`${cache}:${result}`),
    cacheBuild: (cache) => recorded.cacheBuilds.push(cache),
    duplicatePublishPrevented: (_pipeline, n) => (recorded.publishPrevented += n),
    localCacheRequest: (cache, result) => recorded.localCacheRequests.push(`${cache}:${result}`),
    lockWaited: (p, s) => recorded.lockWaits.push(`${p}.${s}`),
    lockAcquired: (_p, _s, waitMs) => recorded.lockAcquiredWaitMs.push(waitMs),
    staleLocksReaped: (n) => (recorded.staleLocksReaped += n),
    runFinished: (pipeline, status, ms) => recorded.runsFinished.push(`${pipeline}:${status}:${ms}`),
    submitDeduplicated: (_pipeline, n) => (recorded.dedupHits += n),
    submitRefused: (_pipeline, code, n) => (recorded.refused[code] = (recorded.refused[code] ?? 0) + n),
    jobsClaimed: (q, n) => (recorded.claimed[q] = (recorded.claimed[q] ?? 0) + n),
    stageTimedOut: (p, s) => recorded.timeouts.push(`${p}.${s}`),
    heartbeatLost: (q) => recorded.heartbeatLosses.push(q),
    artifactWriteFailed: () => (recorded.artifactWriteFailures += 1),
    publicationsRequested: (p, profiles) => recorded.publicationsRequested.push(...profiles.map((profile) => `${p}:${profile}`)),
  };
  return { observer, recorded };
}

/** The engine only hands the artifact store to handlers; these tests never touch it. */
const unusedArtifacts: ArtifactStore = {
  put: () => Promise.reject(new Error('artifacts not used in engine tests')),
  get: () => Promise.reject(new Error('artifacts not used in engine tests')),
  has: () => Promise.resolve(false),
  collectOrphanedTemps: () => Promise.resolve(0),
  listTemps: async function* () {},
  list: async function* () {},
  remove: () => Promise.resolve(false),
};

/** A kiln over a memory store and a fake clock. */
export interface EngineHarness {
  kiln: Kiln;
  store: Store;
  clock: FakeClock;
  recorded: Recorded;
}

/** Creates a harness; backoff jitter is fixed at 0.5 so delays are predictable. */
export async function createEngineHarness(
  pipelines: PipelineDefinition[],
  policies?: PolicyOverrides,
  options: { lockTtlMs?: number; admission?: AdmissionLimits } = {},
): Promise<EngineHarness> {
  const clock = createFakeClock();
  const ids = createIdGenerator(clock);
  const store = createMemoryStore({ clock, ids });
  await store.migrate();
  const { observer, recorded } = createRecorder();
  const kiln = createKiln({ store, artifacts: unusedArtifacts, pipelines, clock, ids, observer, random: () => 0.5, ...(policies ? { policies } : {}), ...options });
  return { kiln, store, clock, recorded };
}

/** A promise with its resolve/reject exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
