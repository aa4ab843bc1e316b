/**
 * Child process: kiln on the PostgreSQL store, in its own fresh schema, one worker with the
 * default settings (per-stage concurrency C).
 *  - noop:   runs of a 1-stage no-op pipeline, submitted before the worker starts (not timed).
 *  - chains: runs of a 5-stage no-op pipeline; the engine enqueues each next stage in the
 *            same commit that completes the previous one. Submitted one by one (`submit`) or in
 *            `submitMany` chunks (`--submit bulk`), timed from the first submission.
 * With `KILN_BENCH_CPU_PROF_DIR` set, the measured phase is CPU-profiled (see cpu-profile.ts).
 * Usage: KILN_PG_URL=... node --import tsx bench/engine-pg/kiln-pg.ts --system kiln --scenario noop|chains --count N --concurrency C
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { noopObserver, type EngineObserver } from '../../src/core/observer.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import type { ArtifactStore } from '../../src/core/ports/artifact-store.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln } from '../../src/engine/kiln-types.ts';
import { emitResultLine } from '../engine/engine-result.ts';
import { warmupRunsFor } from '../engine/kiln-bench.ts';
import { SubmitMode, submitHeads } from '../engine/submit-heads.ts';
import { timeStoreCalls, type TimedStore } from './store-call-timer.ts';
import { startCpuProfile, type CpuProfileSummary } from './cpu-profile.ts';
import { benchSchemaName, parsePgChildArgs, type PgChildArgs } from './pg-child-args.ts';
import { CHAIN_STAGE_COUNT, measurePhase, PgScenario, type PgBenchResult, type PhaseTiming } from './pg-bench-result.ts';
import { createProgress, type Progress } from './pg-progress.ts';

const PIPELINE = 'bench-pg';
/** Pre-fill submissions in flight at once: ordering is irrelevant and the fill is not timed. */
const PREFILL_PARALLEL = 20;

interface KilnContext {
  args: PgChildArgs;
  schema: string;
  artifacts: ArtifactStore;
}

/** An open engine over its own store (its own pool). */
interface KilnSession {
  kiln: Kiln;
  store: Store;
  /** Claim and commit call times through this session. */
  calls: TimedStore['stats'];
  /** Stage executions that did not succeed. */
  failures(): number;
}

/**
 * `kiln-prefetch` holds as many jobs as graphile-worker's batched preset (a local queue of 500):
 * 500 across the pipeline's stages, `concurrency` of them running per stage. `kiln` uses defaults.
 */
function prefetchFor(ctx: KilnContext, stageCount: number): number {
  return ctx.args.system === 'kiln-prefetch' ? Math.max(0, Math.floor(LOCAL_QUEUE_SIZE / stageCount) - ctx.args.concurrency) : 0;
}

const LOCAL_QUEUE_SIZE = 500;

function buildPipeline(ctx: KilnContext, progress: Progress) {
  const stageCount = ctx.args.scenario === PgScenario.Noop ? 1 : CHAIN_STAGE_COUNT;
  const stages = Array.from({ length: stageCount }, (_, i) => ({
    name: `s${i + 1}`,
    handler: () => {
      progress.started();
      return null;
    },
  }));
  return definePipeline({ name: PIPELINE, version: 1, defaults: { concurrency: ctx.args.concurrency, prefetch: prefetchFor(ctx, stageCount) }, stages });
}

/** Opens a store on the bench schema (migrating it) and an engine whose observer feeds `progress`. */
async function openSession(ctx: KilnContext, progress: Progress): Promise<KilnSession> {
  const store = createPostgresStore({ connectionString: ctx.args.connectionString, schema: ctx.schema });
  await store.migrate();
  let failed = 0;
  // Spread the no-op observer so events added to the port later need no change here.
  const observer: EngineObserver = {
    ...noopObserver,
    stageExecuted(e) {
      if (e.outcome !== 'succeeded') failed++;
    },
    runStatus(_pipeline, status) {
      // Emitted after the commit that made the run succeed.
      if (status === 'succeeded') progress.finished();
    },
  };
  const timed = timeStoreCalls(store);
  const kiln = createKiln({ store: timed.store, artifacts: ctx.artifacts, pipelines: [buildPipeline(ctx, progress)], observer });
  return { kiln, store, calls: timed.stats, failures: () => failed };
}

async function submitRuns(kiln: Kiln, mode: SubmitMode, count: number, offset: number): Promise<void> {
  await submitHeads(mode, count, offset, {
    one: (n) => kiln.submit(PIPELINE, { n }),
    many: (ns) => kiln.submitMany(PIPELINE, ns.map((n) => ({ input: { n } }))),
  });
}

async function submitParallel(kiln: Kiln, count: number, offset: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await kiln.submit(PIPELINE, { n: offset + next++ });
  };
  await Promise.all(Array.from({ length: PREFILL_PARALLEL }, lane));
}

/** Unmeasured warm-up on its own store (closed before measuring), so JIT and statement preparation do not count. */
async function warmUp(ctx: KilnContext, warmup: number): Promise<void> {
  const progress = createProgress('kiln warm-up');
  const session = await openSession(ctx, progress);
  const worker = session.kiln.createWorker();
  worker.start();
  try {
    // Chains warm up the submit path they measure; the no-op warm-up stays one by one.
    const mode = ctx.args.scenario === PgScenario.Chains ? ctx.args.submit : SubmitMode.Single;
    await submitRuns(session.kiln, mode, warmup, 0);
    await progress.waitFor(warmup);
  } finally {
    await worker.stop(1_000);
    await session.store.close();
  }
}

async function prefill(ctx: KilnContext, count: number, offset: number): Promise<void> {
  const session = await openSession(ctx, createProgress('kiln pre-fill'));
  try {
    await submitParallel(session.kiln, count, offset);
  } finally {
    await session.store.close();
  }
}

/** Runs `body` with the worker started, profiling it when asked; always stops worker and store. */
async function withWorker(ctx: KilnContext, session: KilnSession, body: () => Promise<PhaseTiming>): Promise<PhaseTiming> {
  const profileDir = process.env['KILN_BENCH_CPU_PROF_DIR'];
  const profiler = profileDir ? await startCpuProfile() : undefined;
  const worker = session.kiln.createWorker();
  worker.start();
  try {
    const timing = await body();
    let cpuProfile: CpuProfileSummary | undefined;
    if (profiler && profileDir) cpuProfile = await profiler.stop(profileDir, `kiln-${ctx.args.scenario}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    if (session.failures() > 0) throw new Error(`${session.failures()} stage executions did not succeed`);
    return { ...timing, extra: { ...timing.extra, storeCalls: session.calls(), ...(cpuProfile ? { cpuProfile } : {}) } };
  } finally {
    await worker.stop(1_000);
    await session.store.close();
  }
}

async function measureNoop(ctx: KilnContext): Promise<PhaseTiming> {
  const progress = createProgress('kiln noop');
  const session = await openSession(ctx, progress);
  return withWorker(ctx, session, async () => {
    await progress.waitFor(ctx.args.count);
    const end = performance.now();
    return { elapsedMs: end - (progress.firstStartMs() ?? end), monitorQueries: 0 };
  });
}

async function measureChains(ctx: KilnContext, offset: number): Promise<PhaseTiming> {
  const progress = createProgress('kiln chains');
  const session = await openSession(ctx, progress);
  return withWorker(ctx, session, async () => {
    const t0 = performance.now();
    await submitRuns(session.kiln, ctx.args.submit, ctx.args.count, offset);
    const submitMs = performance.now() - t0;
    await progress.waitFor(ctx.args.count);
    return { elapsedMs: performance.now() - t0, monitorQueries: 0, extra: { submitMs: Math.round(submitMs) } };
  });
}

async function dropSchema(ctx: KilnContext): Promise<void> {
  const admin = new pg.Client({ connectionString: ctx.args.connectionString });
  await admin.connect();
  await admin.query(`drop schema if exists ${ctx.schema} cascade`).finally(() => admin.end());
}

async function main(): Promise<PgBenchResult> {
  const args = parsePgChildArgs(process.argv.slice(2));
  if (args.system !== 'kiln' && args.system !== 'kiln-prefetch') throw new Error(`kiln child cannot run ${args.system}`);
  // The no-op stages never write artifacts; the directory only exists because the store needs a root.
  const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-pg-'));
  const ctx: KilnContext = { args, schema: benchSchemaName('kiln', args.scenario), artifacts: createFsArtifactStore({ root: join(dir, 'artifacts') }) };
  try {
    const warmup = warmupRunsFor(args.count);
    await warmUp(ctx, warmup);
    // Pre-filling is not timed; its pool is closed before the counters are read.
    if (args.scenario === PgScenario.Noop) await prefill(ctx, args.count, warmup);
    const result = await measurePhase({
      ...args,
      run: () => (args.scenario === PgScenario.Noop ? measureNoop(ctx) : measureChains(ctx, warmup)),
    });
    const settings = args.system === 'kiln' ? 'createPostgresStore defaults; worker defaults' : `stage prefetch ${prefetchFor(ctx, args.scenario === PgScenario.Noop ? 1 : CHAIN_STAGE_COUNT)}`;
    return { ...result, extra: { ...result.extra, settings, warmup } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await dropSchema(ctx);
  }
}

emitResultLine(await main());
