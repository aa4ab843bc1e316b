/**
 * Child process: pg-boss 10.4 on the suite's PostgreSQL, in its own fresh schema.
 *
 * pg-boss 10 has no per-worker concurrency setting: "each call to work() will add a new
 * worker", and a worker fetches `batchSize` jobs per poll (pg-boss docs, api/workers.md).
 * Its loop sleeps `pollingInterval` after every fetch, even a productive one (src/worker.js),
 * and `send` does not wake local workers, so out of the box one worker handles at most
 * `batchSize` jobs per 2 s. To give it its best documented shot:
 *  - `pollingIntervalSeconds: 0.5`, the minimum pg-boss accepts;
 *  - the public `notifyWorker(id)` ("bypass the polling interval for the next fetch"): a
 *    worker that got jobs wakes itself, and each `send` of a next stage wakes one of that
 *    stage's workers, so workers loop continuously while jobs flow and poll only when idle;
 *  - one worker per queue with `batchSize` C, the batch run concurrently by the handler, i.e.
 *    at most C jobs in flight per queue as for kiln and graphile-worker.
 *
 *  - noop:   jobs pre-filled with `insert` (bulk), one queue.
 *  - chains: one queue per stage; each handler `send`s the next stage's job before returning.
 *            Heads are sent one by one with `send`, or in `insert` chunks with `--submit bulk`
 *            (each chunk then wakes the first stage's worker, as a next-stage `send` does).
 * Usage: KILN_PG_URL=... node --import tsx bench/engine-pg/pg-boss.ts --system pg-boss --scenario noop|chains --count N --concurrency C
 */
import { performance } from 'node:perf_hooks';
import PgBoss from 'pg-boss';
import pg from 'pg';
import { emitResultLine } from '../engine/engine-result.ts';
import { warmupRunsFor } from '../engine/kiln-bench.ts';
import { SubmitMode, submitHeads } from '../engine/submit-heads.ts';
import { benchSchemaName, parsePgChildArgs, type PgChildArgs } from './pg-child-args.ts';
import { CHAIN_STAGE_COUNT, measurePhase, PgScenario, type PgBenchResult, type PhaseTiming } from './pg-bench-result.ts';
import { createProgress, pollUntilZero, type Progress } from './pg-progress.ts';

/** The minimum pg-boss 10 accepts (attorney.js `MIN_POLLING_INTERVAL_MS: 500`). */
const POLLING_INTERVAL_SECONDS = 0.5;
/**
 * How C jobs per queue are in flight: one worker fetching C per poll (a batch is completed or
 * failed as a whole after its handler resolves). One worker x 10 was measured against 10
 * workers x 1 here and was far faster (no-op ~3.2k vs ~0.7k jobs/s: ten single-job fetchers
 * keep PostgreSQL busy skipping each other's locked rows), so the comparison uses it.
 */
const WORKERS_PER_QUEUE = 1;
const NOOP_QUEUE = 'noop';
const STAGES = Array.from({ length: CHAIN_STAGE_COUNT }, (_, i) => `s${i + 1}`);
/** `insert` takes one JSON array; chunks keep each statement's parameter modest. */
const PREFILL_CHUNK = 1000;

interface BossContext {
  args: PgChildArgs;
  schema: string;
}

/** The queue names of a scenario. */
function queuesOf(ctx: BossContext): string[] {
  return ctx.args.scenario === PgScenario.Noop ? [NOOP_QUEUE] : STAGES;
}

async function startBoss(ctx: BossContext): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: ctx.args.connectionString, schema: ctx.schema });
  boss.on('error', (err) => process.stderr.write(`pg-boss error: ${err.message}\n`));
  await boss.start();
  return boss;
}

function stopBoss(boss: PgBoss): Promise<void> {
  // graceful: wait for in-flight handlers; close: end the pool so its connections flush their stats.
  return boss.stop({ graceful: true, wait: true, close: true, timeout: 10_000 });
}

/** Worker ids per queue, for waking: filled as `work()` resolves. */
type WorkerIds = Map<string, string[]>;

function wakeOne(boss: PgBoss, ids: WorkerIds, queue: string, turn: number): void {
  const list = ids.get(queue);
  const id = list?.[turn % list.length];
  if (id) boss.notifyWorker(id);
}

/** Wakes one worker of a queue (round robin), bypassing its polling interval. */
type WakeQueue = (queue: string) => void;

/** Starts the workers of every queue; a chain stage sends the next stage's job. */
async function startWorkers(ctx: BossContext, boss: PgBoss, progress: Progress): Promise<WakeQueue> {
  const ids: WorkerIds = new Map();
  let turn = 0;
  const queues = queuesOf(ctx);
  for (const [i, queue] of queues.entries()) {
    const next = queues[i + 1];
    for (let w = 0; w < WORKERS_PER_QUEUE; w++) {
      const self: { id?: string } = {};
      const id = await boss.work<object>(queue, { batchSize: ctx.args.concurrency, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }, async (jobs) => {
        await Promise.all(
          jobs.map(async (job) => {
            progress.started();
            if (!next) return progress.finished();
            await boss.send(next, job.data);
            wakeOne(boss, ids, next, turn++);
          }),
        );
        // A productive fetch means more may be waiting: skip the poll sleep.
        if (self.id) boss.notifyWorker(self.id);
      });
      self.id = id;
      ids.set(queue, [...(ids.get(queue) ?? []), id]);
    }
  }
  return (queue) => wakeOne(boss, ids, queue, turn++);
}

async function prefill(boss: PgBoss, count: number, offset: number): Promise<void> {
  for (let start = 0; start < count; start += PREFILL_CHUNK) {
    const size = Math.min(PREFILL_CHUNK, count - start);
    await boss.insert(Array.from({ length: size }, (_, i) => ({ name: NOOP_QUEUE, data: { n: offset + start + i } })));
  }
}

async function sendChainHeads(boss: PgBoss, wake: WakeQueue, mode: SubmitMode, count: number, offset: number): Promise<void> {
  const head = STAGES[0] ?? '';
  await submitHeads(mode, count, offset, {
    one: (n) => boss.send(head, { n }),
    many: async (ns) => {
      await boss.insert(ns.map((n) => ({ name: head, data: { n } })));
      // `insert` does not wake local workers; without this an idle head worker sleeps up to 0.5 s.
      wake(head);
    },
  });
}

function unfinishedJobsSql(schema: string): string {
  // Completed jobs stay in the table (archived later); `complete` runs after the handler returns.
  return `select count(*)::int as n from ${schema}.job where state in ('created', 'retry', 'active')`;
}

async function withMonitor<T>(ctx: BossContext, body: (monitor: pg.Client) => Promise<T>): Promise<T> {
  const monitor = new pg.Client({ connectionString: ctx.args.connectionString });
  await monitor.connect();
  try {
    return await body(monitor);
  } finally {
    await monitor.end();
  }
}

async function waitUntilDone(ctx: BossContext, progress: Progress, total: number, monitor: pg.Client): Promise<number> {
  await progress.waitFor(total);
  return pollUntilZero(monitor, unfinishedJobsSql(ctx.schema));
}

/** Unmeasured warm-up on its own instance (stopped before measuring). Also creates the queues. */
async function warmUp(ctx: BossContext, warmup: number): Promise<void> {
  const boss = await startBoss(ctx);
  try {
    for (const queue of queuesOf(ctx)) await boss.createQueue(queue);
    const progress = createProgress('pg-boss warm-up');
    const wake = await startWorkers(ctx, boss, progress);
    if (ctx.args.scenario === PgScenario.Noop) await prefill(boss, warmup, 0);
    else await sendChainHeads(boss, wake, ctx.args.submit, warmup, 0);
    await withMonitor(ctx, (monitor) => waitUntilDone(ctx, progress, warmup, monitor));
  } finally {
    await stopBoss(boss);
  }
}

async function measureNoop(ctx: BossContext): Promise<PhaseTiming> {
  const progress = createProgress('pg-boss noop');
  return withMonitor(ctx, async (monitor) => {
    const boss = await startBoss(ctx);
    try {
      await startWorkers(ctx, boss, progress);
      const monitorQueries = await waitUntilDone(ctx, progress, ctx.args.count, monitor);
      const end = performance.now();
      return { elapsedMs: end - (progress.firstStartMs() ?? end), monitorQueries };
    } finally {
      await stopBoss(boss);
    }
  });
}

async function measureChains(ctx: BossContext, offset: number): Promise<PhaseTiming> {
  const progress = createProgress('pg-boss chains');
  return withMonitor(ctx, async (monitor) => {
    const boss = await startBoss(ctx);
    try {
      const wake = await startWorkers(ctx, boss, progress);
      const t0 = performance.now();
      await sendChainHeads(boss, wake, ctx.args.submit, ctx.args.count, offset);
      const submitMs = performance.now() - t0;
      const monitorQueries = await waitUntilDone(ctx, progress, ctx.args.count, monitor);
      return { elapsedMs: performance.now() - t0, monitorQueries, extra: { submitMs: Math.round(submitMs) } };
    } finally {
      await stopBoss(boss);
    }
  });
}

async function main(): Promise<PgBenchResult> {
  const args = parsePgChildArgs(process.argv.slice(2));
  if (args.system !== 'pg-boss') throw new Error(`pg-boss child cannot run ${args.system}`);
  const ctx: BossContext = { args, schema: benchSchemaName(args.system, args.scenario) };
  try {
    const warmup = warmupRunsFor(args.count);
    await warmUp(ctx, warmup);
    if (args.scenario === PgScenario.Noop) {
      // Pre-filling is not timed; its instance is stopped before the counters are read.
      const filler = await startBoss(ctx);
      await prefill(filler, args.count, warmup).finally(() => stopBoss(filler));
    }
    const result = await measurePhase({
      ...args,
      run: () => (args.scenario === PgScenario.Noop ? measureNoop(ctx) : measureChains(ctx, warmup)),
    });
    const settings = {
      workersPerQueue: WORKERS_PER_QUEUE,
      batchSize: args.concurrency,
      pollingIntervalSeconds: POLLING_INTERVAL_SECONDS,
      wake: `notifyWorker after a productive fetch and after each next-stage send${args.submit === SubmitMode.Bulk ? ' and each head insert chunk' : ''}`,
      pool: 'default (max 10)',
    };
    return { ...result, extra: { ...result.extra, settings, warmup } };
  } finally {
    const admin = new pg.Client({ connectionString: args.connectionString });
    await admin.connect();
    await admin.query(`drop schema if exists ${ctx.schema} cascade`).finally(() => admin.end());
  }
}

emitResultLine(await main());
