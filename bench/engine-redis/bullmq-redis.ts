/**
 * Child process: BullMQ on the suite's redis-server, the same two scenarios kiln runs:
 *  - noop:   one queue, one Worker (concurrency C); jobs pre-filled with `addBulk` (not timed),
 *            timed from the first processor start until the last 'completed' event.
 *  - chains: the 5-stage chain of bench/engine/bullmq-chain.ts (each processor adds the next
 *            stage's job), heads added one by one or with `addBulk`; timed from the first add.
 * Library defaults otherwise (completed jobs are kept, as kiln keeps its records).
 * Usage: KILN_BENCH_REDIS_URL=... node --import tsx bench/engine-redis/bullmq-redis.ts --system bullmq --scenario noop|chains --count N --concurrency C
 */
import { performance } from 'node:perf_hooks';
import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import { buildChain } from '../engine/bullmq-chain.ts';
import { createChainProbe, waitForChains } from '../engine/chain-probe.ts';
import { emitResultLine } from '../engine/engine-result.ts';
import { warmupRunsFor } from '../engine/kiln-bench.ts';
import { BULK_CHUNK_SIZE, submitHeads, type SubmitMode } from '../engine/submit-heads.ts';
import { PgScenario, type PhaseTiming } from '../engine-pg/pg-bench-result.ts';
import { createProgress, type Progress } from '../engine-pg/pg-progress.ts';
import { measureRedisPhase, type RedisBenchResult } from './redis-bench-result.ts';
import { parseRedisChildArgs, type RedisChildArgs } from './redis-child-args.ts';

const NOOP_QUEUE = 'bench-noop';

function connectionOf(url: string): ConnectionOptions {
  const parsed = new URL(url);
  const db = parsed.pathname.replace('/', '');
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(db ? { db: Number(db) } : {}),
    maxRetriesPerRequest: null,
  };
}

async function addNoopJobs(queue: Queue, count: number, offset: number): Promise<void> {
  for (let start = 0; start < count; start += BULK_CHUNK_SIZE) {
    const size = Math.min(BULK_CHUNK_SIZE, count - start);
    await queue.addBulk(Array.from({ length: size }, (_, i) => ({ name: NOOP_QUEUE, data: { n: offset + start + i } })));
  }
}

function startNoopWorker(connection: ConnectionOptions, concurrency: number, progress: Progress): Worker {
  const worker = new Worker(
    NOOP_QUEUE,
    async () => {
      progress.started();
      return null;
    },
    { connection, concurrency },
  );
  worker.on('completed', () => progress.finished());
  return worker;
}

/** Warm-up with a worker of its own (closed), pre-fill, then the timed drain by a new worker. */
async function runNoop(args: RedisChildArgs, connection: ConnectionOptions, warmup: number): Promise<RedisBenchResult> {
  const queue = new Queue(NOOP_QUEUE, { connection });
  try {
    const warm = createProgress('bullmq warm-up');
    const warmWorker = startNoopWorker(connection, args.concurrency, warm);
    await addNoopJobs(queue, warmup, 0);
    await warm.waitFor(warmup);
    await warmWorker.close();
    await addNoopJobs(queue, args.count, warmup);
    return await measureRedisPhase({
      ...args,
      run: async (): Promise<PhaseTiming> => {
        const progress = createProgress('bullmq noop');
        const worker = startNoopWorker(connection, args.concurrency, progress);
        try {
          await progress.waitFor(args.count);
          const end = performance.now();
          return { elapsedMs: end - (progress.firstStartMs() ?? end), monitorQueries: 0 };
        } finally {
          await worker.close();
        }
      },
    });
  } finally {
    await queue.close();
  }
}

async function addHeads(first: Queue, mode: SubmitMode, count: number, offset: number): Promise<void> {
  await submitHeads(mode, count, offset, {
    one: (n) => first.add('bench-s1', { n }),
    many: (ns) => first.addBulk(ns.map((n) => ({ name: 'bench-s1', data: { n } }))),
  });
}

/** Warm-up chains, then the timed ones, on the same five workers. */
async function runChains(args: RedisChildArgs, connection: ConnectionOptions, warmup: number): Promise<RedisBenchResult> {
  const probe = createChainProbe();
  const { queues, workers } = buildChain(connection, args.concurrency, probe);
  const first = queues[0];
  if (!first) throw new Error('no first queue');
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    await addHeads(first, args.submit, warmup, 0);
    await waitForChains(probe, warmup);
    return await measureRedisPhase({
      ...args,
      run: async (): Promise<PhaseTiming> => {
        const t0 = performance.now();
        await addHeads(first, args.submit, args.count, warmup);
        const submitMs = performance.now() - t0;
        await waitForChains(probe, warmup + args.count);
        if (probe.failed > 0) throw new Error(`${probe.failed} BullMQ jobs failed`);
        return { elapsedMs: performance.now() - t0, monitorQueries: 0, extra: { submitMs: Math.round(submitMs) } };
      },
    });
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await Promise.all(queues.map((q) => q.close()));
  }
}

async function main(): Promise<RedisBenchResult> {
  const args = parseRedisChildArgs(process.argv.slice(2));
  if (args.system !== 'bullmq') throw new Error(`BullMQ child cannot run ${args.system}`);
  const connection = connectionOf(args.url);
  const warmup = warmupRunsFor(args.count);
  const result = args.scenario === PgScenario.Noop ? await runNoop(args, connection, warmup) : await runChains(args, connection, warmup);
  return { ...result, extra: { ...result.extra, settings: 'BullMQ defaults (Worker concurrency C, completed jobs kept)', warmup } };
}

emitResultLine(await main());
