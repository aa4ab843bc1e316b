/**
 * Times the two Backend calls that carry a worker's throughput, `claimJobs` and `commit`, and
 * records their batch sizes, so a result shows whether kiln waits on claims, on commits, or on
 * neither. Only the public port is wrapped.
 */
import { performance } from 'node:perf_hooks';
import type { Backend } from '../../src/core/ports.ts';
import { summarize, type LatencySummary } from '../engine/engine-result.ts';

/** Calls of one method over the timed period. */
export interface CallStats {
  calls: number;
  /** Calls that returned (claims) or carried (commits) nothing. */
  emptyCalls: number;
  /** Jobs claimed, or items committed, per non-empty call. */
  meanBatch: number;
  /** Wall time of non-empty calls, including waiting for a pooled connection. */
  callMs: LatencySummary;
  /** Sum of the wall time of all calls; overlapping calls each count in full. */
  totalMs: number;
}

/** A wrapped backend and the stats gathered through it. */
export interface TimedBackend {
  backend: Backend;
  stats(): { claimJobs: CallStats; commit: CallStats };
}

interface Recorder {
  record(batch: number, ms: number): void;
  stats(): CallStats;
}

function createRecorder(): Recorder {
  const callMs: number[] = [];
  let calls = 0;
  let empty = 0;
  let items = 0;
  let totalMs = 0;
  return {
    record(batch, ms) {
      calls++;
      totalMs += ms;
      if (batch === 0) return void empty++;
      items += batch;
      callMs.push(ms);
    },
    stats: () => ({
      calls,
      emptyCalls: empty,
      meanBatch: callMs.length === 0 ? 0 : Math.round((items / callMs.length) * 10) / 10,
      callMs: summarize(callMs),
      totalMs: Math.round(totalMs),
    }),
  };
}

/** Wraps `backend` so every `claimJobs` and `commit` call is timed. */
export function timeBackendCalls(backend: Backend): TimedBackend {
  const claims = createRecorder();
  const commits = createRecorder();
  const claimJobs: Backend['claimJobs'] = async (requests) => {
    const t0 = performance.now();
    const jobs = await backend.claimJobs(requests);
    claims.record(jobs.length, performance.now() - t0);
    return jobs;
  };
  const commit: Backend['commit'] = async (items) => {
    const t0 = performance.now();
    const results = await backend.commit(items);
    commits.record(items.length, performance.now() - t0);
    return results;
  };
  const overrides: Partial<Backend> = { claimJobs, commit };
  const wrapped = new Proxy(backend, {
    get(target, prop, receiver) {
      const own = overrides[prop as keyof Backend];
      if (own) return own;
      const value: unknown = Reflect.get(target, prop, receiver);
      // Bound to the real backend so class-based backends keep their private state reachable.
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { backend: wrapped, stats: () => ({ claimJobs: claims.stats(), commit: commits.stats() }) };
}
