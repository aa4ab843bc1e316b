/**
 * Child process: graphile-worker 0.17 on the suite's PostgreSQL, in its own fresh schema.
 * `--system graphile-default` uses the library's defaults (only `concurrency` is set);
 * `--system graphile-batched` adds the batching settings documented for throughput;
 * `--system graphile-batched-state` is that plus what a user must add to get what kiln records:
 * every task writes one state row for its job (an upsert in a table of its own, outside the
 * job's completion, which graphile-worker commits separately).
 *
 *  - noop:   one runner (concurrency C) on one task; jobs pre-filled with `addJobs`.
 *  - chains: one runner (concurrency C) on the five stage tasks; each handler adds the next
 *            stage's job with `helpers.addJob` before returning, as graphile-worker users chain
 *            jobs. Heads are added one by one with `addJob`, or in `addJobs` chunks with
 *            `--submit bulk`.
 * Usage: KILN_PG_URL=... node --import tsx bench/engine-pg/graphile-worker.ts --system S --scenario noop|chains --count N --concurrency C
 */
import { performance } from 'node:perf_hooks';
import { Logger, makeWorkerUtils, run, type Runner, type RunnerOptions, type Task, type WorkerUtils } from 'graphile-worker';
import pg from 'pg';
import { emitResultLine } from '../engine/engine-result.ts';
import { warmupRunsFor } from '../engine/kiln-bench.ts';
import { submitHeads, type SubmitMode } from '../engine/submit-heads.ts';
import { benchSchemaName, parsePgChildArgs, type PgChildArgs } from './pg-child-args.ts';
import { CHAIN_STAGE_COUNT, measurePhase, PgScenario, type PgBenchResult, type PhaseTiming } from './pg-bench-result.ts';
import { createProgress, pollUntilZero, type Progress } from './pg-progress.ts';

/**
 * The documented batching settings. Source: graphile-worker 0.17 TSDoc of
 * `GraphileConfig.WorkerOptions` (node_modules/graphile-worker/dist/index.d.ts: `localQueue.size`,
 * `completeJobBatchDelay`, `failJobBatchDelay`, all "@see worker.graphile.org/docs/performance#batching")
 * and the "Quick stats" preset on https://worker.graphile.org/docs/performance, which pairs
 * `localQueue: { size: 500 }` with `completeJobBatchDelay: 0, failJobBatchDelay: 0`. The
 * 0.17.0 release notes recommend `concurrency + 1` as a starting size; 500 (the performance
 * page's value) was faster here on both scenarios, so the comparison uses it.
 */
export const GRAPHILE_BATCHING = {
  localQueue: { size: 500 },
  completeJobBatchDelay: 0,
  failJobBatchDelay: 0,
} as const;

const NOOP_TASK = 'noop';
const STAGES = Array.from({ length: CHAIN_STAGE_COUNT }, (_, i) => `s${i + 1}`);
/** `addJobs` takes one array; chunks keep each INSERT's JSON parameter modest. */
const PREFILL_CHUNK = 1000;

interface GraphileContext {
  args: PgChildArgs;
  schema: string;
  batched: boolean;
  /** Each task writes one row of {@link stateTable} for its job. */
  recordsState: boolean;
}

/** The per-job state table of `graphile-batched-state`, in the run's own schema. */
function stateTable(schema: string): string {
  return `${schema}.job_state`;
}

/** Creates the state table when the system records state. */
async function createStateTable(ctx: GraphileContext): Promise<void> {
  if (!ctx.recordsState) return;
  const client = new pg.Client({ connectionString: ctx.args.connectionString });
  await client.connect();
  try {
    await client.query(`create table ${stateTable(ctx.schema)} (job_id bigint primary key, task text not null, status text not null, attempts int not null, updated_at timestamptz not null)`);
  } finally {
    await client.end();
  }
}

/** Wraps a task so it first upserts its job's state row (one statement, autocommitted) when the system records state. */
function withState(ctx: GraphileContext, task: Task): Task {
  if (!ctx.recordsState) return task;
  const sql = `insert into ${stateTable(ctx.schema)} (job_id, task, status, attempts, updated_at) values ($1, $2, 'succeeded', $3, now())
    on conflict (job_id) do update set status = excluded.status, attempts = excluded.attempts, updated_at = excluded.updated_at`;
  return async (payload, helpers) => {
    await task(payload, helpers);
    await helpers.withPgClient((client) => client.query(sql, [helpers.job.id, helpers.job.task_identifier, helpers.job.attempts]));
  };
}

/** Warnings and errors go to stderr; graphile's info lines would drown the suite's output. */
const quietLogger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') process.stderr.write(`graphile-worker ${level}: ${message}\n`);
});

function runnerOptions(ctx: GraphileContext, taskList: Record<string, Task>): RunnerOptions {
  const base: RunnerOptions = {
    connectionString: ctx.args.connectionString,
    schema: ctx.schema,
    concurrency: ctx.args.concurrency,
    taskList,
    noHandleSignals: true,
    logger: quietLogger,
    // No crontab file lookup in the repo root.
    crontab: '',
  };
  return ctx.batched ? { ...base, preset: { worker: GRAPHILE_BATCHING } } : base;
}

function unfinishedJobsSql(schema: string): string {
  // Completed jobs are deleted; a job whose completion is still batched is locked, not gone.
  return `select count(*)::int as n from ${schema}._private_jobs`;
}

/**
 * Starts one runner serving every stage task; stage i adds stage i+1's job, the last stage
 * counts a finished chain. graphile-worker's concurrency is per runner, not per task, so one
 * runner at concurrency C never has more than C jobs of a stage in flight. One runner per
 * stage (5 x C, a literal "C per stage") was measured too and was ~1.5x slower: every insert
 * NOTIFYs all five runners and the four that cannot take the job still poll for one.
 */
async function startChainRunners(ctx: GraphileContext, progress: Progress): Promise<Runner[]> {
  const tasks: Record<string, Task> = {};
  STAGES.forEach((stage, i) => {
    const next = STAGES[i + 1];
    tasks[stage] = withState(ctx, async (payload, helpers) => {
      progress.started();
      if (next) await helpers.addJob(next, payload as Record<string, unknown>);
      else progress.finished();
    });
  });
  return [await run(runnerOptions(ctx, tasks))];
}

function startNoopRunner(ctx: GraphileContext, progress: Progress): Promise<Runner> {
  const task: Task = withState(ctx, async () => {
    progress.started();
    progress.finished();
  });
  return run(runnerOptions(ctx, { [NOOP_TASK]: task }));
}

async function prefill(utils: WorkerUtils, count: number, offset: number): Promise<void> {
  for (let start = 0; start < count; start += PREFILL_CHUNK) {
    const size = Math.min(PREFILL_CHUNK, count - start);
    await utils.addJobs(Array.from({ length: size }, (_, i) => ({ identifier: NOOP_TASK, payload: { n: offset + start + i } })));
  }
}

async function addChainHeads(utils: WorkerUtils, mode: SubmitMode, count: number, offset: number): Promise<void> {
  const head = STAGES[0] ?? '';
  await submitHeads(mode, count, offset, {
    one: (n) => utils.addJob(head, { n }),
    many: (ns) => utils.addJobs(ns.map((n) => ({ identifier: head, payload: { n } }))),
  });
}

/** Waits for `total` handler finishes, then for the database to confirm every job is gone. */
async function waitUntilDone(ctx: GraphileContext, progress: Progress, total: number, monitor: pg.Client): Promise<number> {
  await progress.waitFor(total);
  return pollUntilZero(monitor, unfinishedJobsSql(ctx.schema));
}

async function withMonitor<T>(ctx: GraphileContext, body: (monitor: pg.Client) => Promise<T>): Promise<T> {
  const monitor = new pg.Client({ connectionString: ctx.args.connectionString });
  await monitor.connect();
  try {
    return await body(monitor);
  } finally {
    await monitor.end();
  }
}

/** Unmeasured warm-up on its own runners (closed before measuring), so JIT and schema setup do not count. */
async function warmUp(ctx: GraphileContext, utils: WorkerUtils, warmup: number): Promise<void> {
  const progress = createProgress('graphile warm-up');
  const runners = ctx.args.scenario === PgScenario.Noop ? [await startNoopRunner(ctx, progress)] : await startChainRunners(ctx, progress);
  try {
    if (ctx.args.scenario === PgScenario.Noop) await prefill(utils, warmup, 0);
    else await addChainHeads(utils, ctx.args.submit, warmup, 0);
    await withMonitor(ctx, (monitor) => waitUntilDone(ctx, progress, warmup, monitor));
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
  }
}

async function measureNoop(ctx: GraphileContext, offset: number): Promise<PhaseTiming> {
  const progress = createProgress('graphile noop');
  return withMonitor(ctx, async (monitor) => {
    const runner = await startNoopRunner(ctx, progress);
    try {
      const monitorQueries = await waitUntilDone(ctx, progress, ctx.args.count, monitor);
      const end = performance.now();
      return { elapsedMs: end - (progress.firstStartMs() ?? end), monitorQueries, extra: { offset } };
    } finally {
      await runner.stop();
    }
  });
}

async function measureChains(ctx: GraphileContext, offset: number): Promise<PhaseTiming> {
  const progress = createProgress('graphile chains');
  const utils = await makeWorkerUtils({ connectionString: ctx.args.connectionString, schema: ctx.schema, logger: quietLogger });
  const runners = await startChainRunners(ctx, progress);
  try {
    return await withMonitor(ctx, async (monitor) => {
      const t0 = performance.now();
      await addChainHeads(utils, ctx.args.submit, ctx.args.count, offset);
      const submitMs = performance.now() - t0;
      const monitorQueries = await waitUntilDone(ctx, progress, ctx.args.count, monitor);
      return { elapsedMs: performance.now() - t0, monitorQueries, extra: { submitMs: Math.round(submitMs) } };
    });
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
    await utils.release();
  }
}

async function main(): Promise<PgBenchResult> {
  const args = parsePgChildArgs(process.argv.slice(2));
  if (!args.system.startsWith('graphile-')) throw new Error(`graphile child cannot run ${args.system}`);
  const recordsState = args.system === 'graphile-batched-state';
  const ctx: GraphileContext = { args, schema: benchSchemaName(args.system, args.scenario), batched: args.system !== 'graphile-default', recordsState };
  const utils = await makeWorkerUtils({ connectionString: args.connectionString, schema: ctx.schema, logger: quietLogger });
  let released = false;
  try {
    await utils.migrate();
    await createStateTable(ctx);
    const warmup = warmupRunsFor(args.count);
    await warmUp(ctx, utils, warmup);
    // Pre-filling is not timed and its connection is closed before the counters are read.
    if (args.scenario === PgScenario.Noop) await prefill(utils, args.count, warmup);
    await utils.release();
    released = true;
    const result = await measurePhase({
      ...args,
      run: () => (args.scenario === PgScenario.Noop ? measureNoop(ctx, warmup) : measureChains(ctx, warmup)),
    });
    const settings = ctx.batched ? { ...GRAPHILE_BATCHING, ...(recordsState ? { stateRow: 'one upsert per job, after its task' } : {}) } : 'defaults (only concurrency set)';
    return { ...result, extra: { ...result.extra, settings, maxPoolSize: 'default (10)', runners: 1, warmup } };
  } finally {
    if (!released) await utils.release();
    const admin = new pg.Client({ connectionString: args.connectionString });
    await admin.connect();
    await admin.query(`drop schema if exists ${ctx.schema} cascade`).finally(() => admin.end());
  }
}

emitResultLine(await main());
