/**
 * kiln's side of the two server benchmarks (PostgreSQL and Redis): one engine with the default
 * worker settings over a store the caller opens, per scenario.
 *  - noop:   runs of a 1-stage no-op pipeline, submitted before the worker starts (not timed),
 *            timed from the first handler start until the last run succeeded.
 *  - chains: runs of a 5-stage no-op pipeline; the engine enqueues each next stage in the
 *            same commit that completes the previous one. Submitted one by one (`submit`) or in
 *            `submitMany` chunks (`--submit bulk`), timed from the first submission.
 * With `KILN_BENCH_CPU_PROF_DIR` set, the measured phase is CPU-profiled (see cpu-profile.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { noopObserver, type EngineObserver } from '../../src/core/observer.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import type { ArtifactStore } from '../../src/core/ports/artifact-store.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln } from '../../src/engine/kiln-types.ts';
import { warmupRunsFor } from '../engine/kiln-bench.ts';
import { SubmitMode, submitHeads } from '../engine/submit-heads.ts';
import { startCpuProfile, type CpuProfileSummary } from './cpu-profile.ts';
import { CHAIN_STAGE_COUNT, PgScenario, type PhaseTiming } from './pg-bench-result.ts';
import { createProgress, type Progress } from './pg-progress.ts';
import { timeStoreCalls, type TimedStore } from './store-call-timer.ts';

const PIPELINE = 'bench-kiln';
/** Pre-fill submissions in flight at once: ordering is irrelevant and the fill is not timed. */
const PREFILL_PARALLEL = 20;

/** What one kiln child measures, and on which store. */
interface KilnScenarioContext {
  scenario: PgScenario;
  /** No-op jobs or chains. */
  count: number;
  /** Per-stage concurrency. */
  concurrency: number;
  /** Jobs claimed ahead per stage (the stage policy's `prefetch`). */
  prefetch: number;
  submit: SubmitMode;
  /** Opens a new store (its own connections) and migrates it; closed by the caller of each phase. */
  openStore(): Promise<Store>;
  artifacts: ArtifactStore;
}

/** An open engine over its own store. */
interface KilnSession {
  kiln: Kiln;
  store: Store;
  /** Claim and commit call times through this session. */
  calls: TimedStore['stats'];
  /** Stage executions that did not succeed. */
  failures(): number;
}

/** graphile-worker's batched preset holds a local queue of this many jobs (see graphile-worker.ts). */
const LOCAL_QUEUE_SIZE = 500;

/**
 * The stage prefetch that makes kiln hold as many jobs as graphile-worker's batched preset: 500
 * across the pipeline's stages, `concurrency` of them running per stage (the `-prefetch` systems).
 */
export function prefetchLikeBatched(scenario: PgScenario, concurrency: number): number {
  return Math.max(0, Math.floor(LOCAL_QUEUE_SIZE / stageCountOf(scenario)) - concurrency);
}

/** Stages of the scenario's pipeline. */
export function stageCountOf(scenario: PgScenario): number {
  return scenario === PgScenario.Noop ? 1 : CHAIN_STAGE_COUNT;
}

function buildPipeline(ctx: KilnScenarioContext, progress: Progress) {
  const stages = Array.from({ length: stageCountOf(ctx.scenario) }, (_, i) => ({
    name: `s${i + 1}`,
    handler: () => {
      progress.started();
      return null;
    },
  }));
  return definePipeline({ name: PIPELINE, version: 1, defaults: { concurrency: ctx.concurrency, prefetch: ctx.prefetch }, stages });
}

/** Opens a store and an engine whose observer feeds `progress`. */
async function openSession(ctx: KilnScenarioContext, progress: Progress): Promise<KilnSession> {
  const store = await ctx.openStore();
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

/** Unmeasured warm-up on its own store (closed before measuring), so JIT and statement or script loading do not count. */
async function warmUpKiln(ctx: KilnScenarioContext, warmup: number): Promise<void> {
  const progress = createProgress('kiln warm-up');
  const session = await openSession(ctx, progress);
  const worker = session.kiln.createWorker();
  worker.start();
  try {
    // Chains warm up the submit path they measure; the no-op warm-up stays one by one.
    const mode = ctx.scenario === PgScenario.Chains ? ctx.submit : SubmitMode.Single;
    await submitRuns(session.kiln, mode, warmup, 0);
    await progress.waitFor(warmup);
  } finally {
    await worker.stop(1_000);
    await session.store.close();
  }
}

/** Submits the no-op scenario's runs (not timed) with a store closed before measuring. */
async function prefillKiln(ctx: KilnScenarioContext, count: number, offset: number): Promise<void> {
  const session = await openSession(ctx, createProgress('kiln pre-fill'));
  try {
    await submitParallel(session.kiln, count, offset);
  } finally {
    await session.store.close();
  }
}

/** Runs `body` with the worker started, profiling it when asked; always stops worker and store. */
async function withWorker(ctx: KilnScenarioContext, session: KilnSession, body: () => Promise<PhaseTiming>): Promise<PhaseTiming> {
  const profileDir = process.env['KILN_BENCH_CPU_PROF_DIR'];
  const profiler = profileDir ? await startCpuProfile() : undefined;
  const worker = session.kiln.createWorker();
  worker.start();
  try {
    const timing = await body();
    let cpuProfile: CpuProfileSummary | undefined;
    if (profiler && profileDir) cpuProfile = await profiler.stop(profileDir, `kiln-${ctx.scenario}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    if (session.failures() > 0) throw new Error(`${session.failures()} stage executions did not succeed`);
    return { ...timing, extra: { ...timing.extra, storeCalls: session.calls(), ...(cpuProfile ? { cpuProfile } : {}) } };
  } finally {
    await worker.stop(1_000);
    await session.store.close();
  }
}

async function measureNoop(ctx: KilnScenarioContext): Promise<PhaseTiming> {
  const progress = createProgress('kiln noop');
  const session = await openSession(ctx, progress);
  return withWorker(ctx, session, async () => {
    await progress.waitFor(ctx.count);
    const end = performance.now();
    return { elapsedMs: end - (progress.firstStartMs() ?? end), monitorQueries: 0 };
  });
}

async function measureChains(ctx: KilnScenarioContext, offset: number): Promise<PhaseTiming> {
  const progress = createProgress('kiln chains');
  const session = await openSession(ctx, progress);
  return withWorker(ctx, session, async () => {
    const t0 = performance.now();
    await submitRuns(session.kiln, ctx.submit, ctx.count, offset);
    const submitMs = performance.now() - t0;
    await progress.waitFor(ctx.count);
    return { elapsedMs: performance.now() - t0, monitorQueries: 0, extra: { submitMs: Math.round(submitMs) } };
  });
}

/** The measured phase of the scenario; `offset` numbers its runs after the warm-up's. */
function measureKiln(ctx: KilnScenarioContext, offset: number): Promise<PhaseTiming> {
  return ctx.scenario === PgScenario.Noop ? measureNoop(ctx) : measureChains(ctx, offset);
}

/** What a kiln child runs: its scenario, the store to open, and how its server counts the phase. */
export interface KilnChildSpec<R extends { extra: Record<string, unknown> }> {
  scenario: PgScenario;
  count: number;
  concurrency: number;
  submit: SubmitMode;
  prefetch: number;
  /** Opens a new store (its own connections) and migrates it. */
  openStore(): Promise<Store>;
  /** Runs the measured phase `run` between the server's counters and builds the result. */
  measure(run: () => Promise<PhaseTiming>): Promise<R>;
}

/**
 * A kiln child's whole run: warm-up, the no-op scenario's pre-fill (neither timed; their stores
 * closed before measuring), then the measured phase through `spec.measure`. The no-op stages
 * never write artifacts; the artifact directory exists only because the engine needs a root.
 */
export async function runKilnChild<R extends { extra: Record<string, unknown> }>(spec: KilnChildSpec<R>): Promise<R> {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-'));
  const ctx: KilnScenarioContext = { ...spec, artifacts: createFsArtifactStore({ root: join(dir, 'artifacts') }) };
  try {
    const warmup = warmupRunsFor(spec.count);
    await warmUpKiln(ctx, warmup);
    if (spec.scenario === PgScenario.Noop) await prefillKiln(ctx, spec.count, warmup);
    const result = await spec.measure(() => measureKiln(ctx, warmup));
    return { ...result, extra: { ...result.extra, warmup } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
