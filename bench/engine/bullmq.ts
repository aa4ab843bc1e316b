/**
 * Child process: the same 5-stage no-op chain on BullMQ. Five queues, one Worker per queue
 * (concurrency = flag); each processor adds the next stage's job before returning, as BullMQ
 * users chain stages. Heads are added one by one (`add`) or in `addBulk` chunks (`--submit`).
 * Starts and stops its own private redis-server. Prints one result line.
 * Usage: node --import tsx bench/engine/bullmq.ts --runs N --concurrency C [--submit single|bulk]
 */
import { performance } from 'node:perf_hooks';
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { parseEngineArgs, type EngineArgs } from './engine-args.ts';
import { emitResult, summarize, type EngineResult } from './engine-result.ts';
import { STAGE_COUNT, warmupRunsFor } from './kiln-bench.ts';
import { findRedisServer, startRedisServer, type RedisServer } from './redis-server.ts';
import { readProcessRssBytes, startRssSampler } from './rss-sampler.ts';
import { submitHeads, type SubmitMode } from './submit-heads.ts';

const PHASE_TIMEOUT_MS = 150_000;

interface Probe {
  recording: boolean;
  handlerStartMs: Map<string, number>;
  stageLatencyMs: number[];
  completed: number;
  failed: number;
  waiter?: { total: number; resolve: () => void };
}

/** Builds the chain: one queue and one worker per stage; workers record start and completion. */
function buildChain(connection: ConnectionOptions, concurrency: number, probe: Probe): { queues: Queue[]; workers: Worker[] } {
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

function waitForChains(probe: Probe, total: number): Promise<void> {
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

/** Adds `count` chain heads in `mode`; returns the loop's duration in ms. */
async function submitAll(first: Queue, mode: SubmitMode, count: number, offset: number): Promise<number> {
  const t0 = performance.now();
  await submitHeads(mode, count, offset, {
    one: (n) => first.add('bench-s1', { n }),
    many: (ns) => first.addBulk(ns.map((n) => ({ name: 'bench-s1', data: { n } }))),
  });
  return performance.now() - t0;
}

async function measure(redis: RedisServer, { runs, concurrency, submit }: EngineArgs): Promise<EngineResult> {
  const rss = startRssSampler(50);
  const redisRss = startRssSampler(50, () => readProcessRssBytes(redis.pid));
  const probe: Probe = { recording: false, handlerStartMs: new Map(), stageLatencyMs: [], completed: 0, failed: 0 };
  const connection: ConnectionOptions = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const { queues, workers } = buildChain(connection, concurrency, probe);
  const first = queues[0];
  if (!first) throw new Error('no first queue');
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    const warmupRuns = warmupRunsFor(runs);
    await submitAll(first, submit, warmupRuns, 0);
    await waitForChains(probe, warmupRuns);
    probe.recording = true;
    const t0 = performance.now();
    const submitMs = await submitAll(first, submit, runs, warmupRuns);
    await waitForChains(probe, warmupRuns + runs);
    const elapsedMs = performance.now() - t0;
    probe.recording = false;
    if (probe.failed > 0) throw new Error(`${probe.failed} BullMQ jobs failed`);
    return {
      system: 'bullmq',
      runs,
      concurrency,
      stagesPerRun: STAGE_COUNT,
      elapsedMs: Math.round(elapsedMs),
      submitMs: Math.round(submitMs),
      runsPerSec: Math.round((runs / elapsedMs) * 1000 * 10) / 10,
      transitionsPerSec: Math.round(((runs * STAGE_COUNT) / elapsedMs) * 1000),
      stageLatency: summarize(probe.stageLatencyMs),
      peakRssMb: rss.stop(),
      extra: {
        latencyBasis: "processor start -> worker 'completed' event (same job; includes adding the next job)",
        redisPeakRssMb: redisRss.stop(),
        redisPersistence: 'off (--save "" --appendonly no)',
        jobRetention: 'BullMQ default (completed jobs kept)',
        warmupRuns,
      },
    };
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await Promise.all(queues.map((q) => q.close()));
  }
}

const args = parseEngineArgs(process.argv.slice(2));
const binary = findRedisServer();
if (!binary) throw new Error('redis-server not found');
const redis = await startRedisServer(binary);
// Whatever happens (throw, signal from the suite's timeout), the private redis must not outlive us.
process.once('exit', () => {
  try {
    process.kill(redis.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void redis.stop().finally(() => process.kill(process.pid, signal)));
}
try {
  emitResult(await measure(redis, args));
} finally {
  await redis.stop();
}
