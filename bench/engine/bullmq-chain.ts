/**
 * The 5-stage chain on BullMQ, shared by the engine suite's BullMQ child and the Redis suite's:
 * one queue and one Worker per stage (concurrency = flag), each processor adding the next
 * stage's job before returning, as BullMQ users chain stages.
 */
import { performance } from 'node:perf_hooks';
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { STAGE_COUNT } from './kiln-bench.ts';

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

/** Builds the chain: one queue and one worker per stage; workers record start and completion. */
export function buildChain(connection: ConnectionOptions, concurrency: number, probe: ChainProbe): { queues: Queue[]; workers: Worker[] } {
  const names = Array.from({ length: STAGE_COUNT }, (_, i) => `bench-s${i + 1}`);
  const queues = names.map((name) => new Queue(name, { connection }));
  const workers = names.map((name, i) => {
    const next = queues[i + 1];
    const worker = new Worker(
      name,
      async (job: Job) => {
        probe.handlerStartMs.set(`${name}:${job.id}`, performance.now());
        if (next) await next.add(names[i + 1] ?? '', job.data);
        return null;
      },
      { connection, concurrency },
    );
    worker.on('completed', (job) => {
      const key = `${name}:${job.id}`;
      const started = probe.handlerStartMs.get(key);
      probe.handlerStartMs.delete(key);
      if (probe.recording && started !== undefined) probe.stageLatencyMs.push(performance.now() - started);
      if (next) return;
      probe.completed++;
      if (probe.waiter && probe.completed >= probe.waiter.total) probe.waiter.resolve();
    });
    worker.on('failed', () => probe.failed++);
    return worker;
  });
  return { queues, workers };
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

