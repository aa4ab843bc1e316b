/**
 * Child process: the same 5-stage no-op chain on BullMQ. Five queues, one Worker per queue
 * (concurrency = flag); each processor adds the next stage's job before returning, as BullMQ
 * users chain stages. Heads are added one by one (`add`) or in `addBulk` chunks (`--submit`).
 * Starts and stops its own private redis-server (test/support/redis-server.ts, persistence off). Prints one result line.
 * Usage: node --import tsx bench/engine/bullmq.ts --runs N --concurrency C [--submit single|bulk]
 */
import type { ConnectionOptions, Queue } from 'bullmq';
import { buildChain } from './bullmq-chain.ts';
import { chainResult, createChainProbe, timeChains } from './chain-probe.ts';
import { parseEngineArgs, type EngineArgs } from './engine-args.ts';
import { emitResult, type EngineResult } from './engine-result.ts';
import { startRedis, type RedisServer } from '../../test/support/redis-server.ts';
import { readProcessRssBytes, startRssSampler } from './rss-sampler.ts';
import { submitHeads, type SubmitMode } from './submit-heads.ts';

/** Adds `count` chain heads in `mode`. */
async function submitAll(first: Queue, mode: SubmitMode, count: number, offset: number): Promise<void> {
  await submitHeads(mode, count, offset, {
    one: (n) => first.add('bench-s1', { n }),
    many: (ns) => first.addBulk(ns.map((n) => ({ name: 'bench-s1', data: { n } }))),
  });
}

async function measure(redis: RedisServer, { runs, concurrency, submit }: EngineArgs): Promise<EngineResult> {
  const rss = startRssSampler(50);
  const pid = redis.pid;
  const redisRss = startRssSampler(50, () => (pid === undefined ? 0 : readProcessRssBytes(pid)));
  const probe = createChainProbe();
  const connection: ConnectionOptions = { host: '127.0.0.1', port: Number(new URL(redis.url).port), maxRetriesPerRequest: null };
  const { queues, workers } = buildChain(connection, concurrency, probe);
  const first = queues[0];
  if (!first) throw new Error('no first queue');
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    const timing = await timeChains(probe, runs, submit, (mode, count, offset) => submitAll(first, mode, count, offset), pid);
    if (probe.failed > 0) throw new Error(`${probe.failed} BullMQ jobs failed`);
    return {
      ...chainResult('bullmq', { runs, concurrency }, timing, probe),
      peakRssMb: rss.stop(),
      extra: {
        latencyBasis: "processor start -> worker 'completed' event (same job; includes adding the next job)",
        redisPeakRssMb: redisRss.stop(),
        redisPersistence: 'off (--save "" --appendonly no)',
        cpuBasis: 'this process + redis-server',
        jobRetention: 'BullMQ default (completed jobs kept)',
        warmupRuns: timing.warmupRuns,
      },
    };
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await Promise.all(queues.map((q) => q.close()));
  }
}

const args = parseEngineArgs(process.argv.slice(2));
// Persistence off: BullMQ gets redis's fastest setting. startRedis kills the server when this process exits.
const redis = await startRedis({ serverArgs: ['--appendonly', 'no'] });
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void redis.stop().finally(() => process.kill(process.pid, signal)));
}
try {
  emitResult(await measure(redis, args));
} finally {
  await redis.stop();
}
