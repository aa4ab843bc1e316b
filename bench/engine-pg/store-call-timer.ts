/**
 * Times the two Store calls that carry a worker's throughput, `jobs.claim` and `jobs.commit`, and
 * records their batch sizes, so a result shows whether kiln waits on claims, on commits, or on
 * neither. Only the public port is wrapped.
 */
import { performance } from 'node:perf_hooks';
import type { JobsPort } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';
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

/** A wrapped store and the stats gathered through it. */
export interface TimedStore {
  store: Store;
  stats(): { claim: CallStats; commit: CallStats };
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

/** Wraps `store` so every `jobs.claim` and `jobs.commit` call is timed. */
export function timeStoreCalls(store: Store): TimedStore {
  const claims = createRecorder();
  const commits = createRecorder();
  const claim: JobsPort['claim'] = async (requests) => {
    const t0 = performance.now();
    const jobs = await store.jobs.claim(requests);
    claims.record(jobs.length, performance.now() - t0);
    return jobs;
  };
  const commit: JobsPort['commit'] = async (items) => {
    const t0 = performance.now();
    const results = await store.jobs.commit(items);
    commits.record(items.length, performance.now() - t0);
    return results;
  };
  const wrapped: Store = { ...store, jobs: { ...store.jobs, claim, commit } };
  return { store: wrapped, stats: () => ({ claim: claims.stats(), commit: commits.stats() }) };
}
