/**
 * Engine test harness: a memory backend on a fake clock, an in-memory artifact stand-in is not
 * needed (the engine only passes the store through), and an observer that records every event.
 */
import { createMemoryBackend } from '../../src/backends/memory/index.ts';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { RunStatus } from '../../src/core/model.ts';
import type { EngineObserver, StageExecution } from '../../src/core/observer.ts';
import type { PipelineDefinition } from '../../src/core/pipeline/define-pipeline.ts';
import type { ArtifactStore, Backend } from '../../src/core/ports.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln, PolicyOverrides } from '../../src/engine/kiln-types.ts';

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
}

/** An observer that records into {@link Recorded}. */
export function createRecorder(): { observer: EngineObserver; recorded: Recorded } {
  const recorded: Recorded = { executions: [], skips: [], redeliveries: {}, runStatuses: [], abandoned: [], orphanedTemps: 0, cacheRequests: [], cacheBuilds: [], publishPrevented: 0 };
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
  };
  return { observer, recorded };
}

/** The engine only hands the artifact store to handlers; these tests never touch it. */
const unusedArtifacts: ArtifactStore = {
  put: () => Promise.reject(new Error('artifacts not used in engine tests')),
  get: () => Promise.reject(new Error('artifacts not used in engine tests')),
  has: () => Promise.resolve(false),
  collectOrphanedTemps: () => Promise.resolve(0),
  list: async function* () {},
  remove: () => Promise.resolve(false),
};

/** A kiln over a memory backend and a fake clock. */
export interface EngineHarness {
  kiln: Kiln;
  backend: Backend;
  clock: FakeClock;
  recorded: Recorded;
}

/** Creates a harness; backoff jitter is fixed at 0.5 so delays are predictable. */
export async function createEngineHarness(pipelines: PipelineDefinition[], policies?: PolicyOverrides): Promise<EngineHarness> {
  const clock = createFakeClock();
  const ids = createIdGenerator(clock);
  const backend = createMemoryBackend({ clock, ids });
  await backend.migrate();
  const { observer, recorded } = createRecorder();
  const kiln = createKiln({ backend, artifacts: unusedArtifacts, pipelines, clock, ids, observer, random: () => 0.5, ...(policies ? { policies } : {}) });
  return { kiln, backend, clock, recorded };
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
