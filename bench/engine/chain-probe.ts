/**
 * What a peer system's 5-stage chain records (handler starts, per-stage latency, finished
 * chains) and the warm-up + timed phase every peer runs, shared by the BullMQ and plainjob
 * children so both are timed the same way.
 */
import { performance } from 'node:perf_hooks';
import { summarize, type EngineResult } from './engine-result.ts';
import { startCpuMeter } from './process-cpu.ts';
import { STAGE_COUNT, warmupRunsFor } from './kiln-bench.ts';
import type { SubmitMode } from './submit-heads.ts';

/** A stuck phase fails instead of hanging the suite. */
export const PHASE_TIMEOUT_MS = 150_000;

/** What the chain's workers record: handler starts, per-stage latency while `recording`, finished chains. */
export interface ChainProbe {
  recording: boolean;
  handlerStartMs: Map<string, number>;
  stageLatencyMs: number[];
  completed: number;
  failed: number;
  waiter?: { total: number; resolve: () => void };
}

export function createChainProbe(): ChainProbe {
  return { recording: false, handlerStartMs: new Map(), stageLatencyMs: [], completed: 0, failed: 0 };
}

/** A stage job's handler started. */
export function stageStarted(probe: ChainProbe, key: string): void {
  probe.handlerStartMs.set(key, performance.now());
}

/** A stage job completed; `last` when it was the chain's last stage. */
export function stageCompleted(probe: ChainProbe, key: string, last: boolean): void {
  const started = probe.handlerStartMs.get(key);
  probe.handlerStartMs.delete(key);
  if (probe.recording && started !== undefined) probe.stageLatencyMs.push(performance.now() - started);
  if (!last) return;
  probe.completed++;
  if (probe.waiter && probe.completed >= probe.waiter.total) probe.waiter.resolve();
}

/** Resolves once `total` chains finished; rejects after {@link PHASE_TIMEOUT_MS}. */
export function waitForChains(probe: ChainProbe, total: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (probe.completed >= total) return resolve();
    const timer = setTimeout(() => reject(new Error(`only ${probe.completed}/${total} chains finished after ${PHASE_TIMEOUT_MS} ms (${probe.failed} failed jobs)`)), PHASE_TIMEOUT_MS);
    probe.waiter = {
      total,
      resolve: () => {
        clearTimeout(timer);
        probe.waiter = undefined;
        resolve();
      },
    };
  });
}

/** How long the timed phase took, how much of it was the submit loop, its CPU, and the warm-up size. */
export interface ChainTiming {
  elapsedMs: number;
  submitMs: number;
  /** See `EngineResult.cpuUsPerTransition`. */
  cpuUsPerTransition: number;
  warmupRuns: number;
}

/**
 * Pushes warm-up chains through (unrecorded), then submits `runs` heads with `submitHeads(mode,
 * count, offset)` and times them until every chain finished. `serverPid`: a server process the
 * system does its work in too (redis-server), whose CPU counts with this process's.
 */
export async function timeChains(
  probe: ChainProbe,
  runs: number,
  mode: SubmitMode,
  submitHeads: (mode: SubmitMode, count: number, offset: number) => Promise<unknown>,
  serverPid?: number,
): Promise<ChainTiming> {
  const warmupRuns = warmupRunsFor(runs);
  await submitHeads(mode, warmupRuns, 0);
  await waitForChains(probe, warmupRuns);
  probe.recording = true;
  const cpu = startCpuMeter(serverPid);
  const t0 = performance.now();
  await submitHeads(mode, runs, warmupRuns);
  const submitMs = performance.now() - t0;
  await waitForChains(probe, warmupRuns + runs);
  const elapsedMs = performance.now() - t0;
  const cpuUsPerTransition = cpu.stop(runs * STAGE_COUNT);
  probe.recording = false;
  return { elapsedMs, submitMs, cpuUsPerTransition, warmupRuns };
}

/** The result fields every peer computes the same way from its timing and probe. */
export function chainResult(
  system: string,
  { runs, concurrency }: { runs: number; concurrency: number },
  timing: ChainTiming,
  probe: ChainProbe,
): Omit<EngineResult, 'peakRssMb' | 'extra'> {
  return {
    system,
    runs,
    concurrency,
    stagesPerRun: STAGE_COUNT,
    elapsedMs: Math.round(timing.elapsedMs),
    submitMs: Math.round(timing.submitMs),
    runsPerSec: Math.round((runs / timing.elapsedMs) * 1000 * 10) / 10,
    transitionsPerSec: Math.round(((runs * STAGE_COUNT) / timing.elapsedMs) * 1000),
    stageLatency: summarize(probe.stageLatencyMs),
    cpuUsPerTransition: timing.cpuUsPerTransition,
  };
}
