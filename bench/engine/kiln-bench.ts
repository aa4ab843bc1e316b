/**
 * Measures kiln on any Store: a 5-stage no-op pipeline, one worker polling every 5 ms, all
 * runs submitted in a tight loop (one by one, or `submitMany` chunks), timed until the observer
 * has seen every run succeed.
 */
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import type { Logger } from '../../src/core/logger.ts';
import { noopObserver, type EngineObserver } from '../../src/core/observer.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import type { ArtifactStore } from '../../src/core/ports/artifact-store.ts';
import type { JobsPort } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln } from '../../src/engine/kiln-types.ts';
import { createLogger } from '../../src/observe/logger.ts';
import { createMetrics } from '../../src/observe/metrics.ts';
import { summarize, type EngineResult } from './engine-result.ts';
import { startCpuMeter } from './process-cpu.ts';
import { startRssSampler } from './rss-sampler.ts';
import { submitHeads, type SubmitMode } from './submit-heads.ts';

/** Stages per run; the same chain length BullMQ gets. */
export const STAGE_COUNT = 5;
export const PIPELINE = 'bench-noop';
/** A stuck benchmark must fail rather than hang the suite. */
const PHASE_TIMEOUT_MS = 150_000;

/** Options of {@link runKilnBench}. */
export interface KilnBenchOptions {
  /** Row name in the report, e.g. `kiln-sqlite`. */
  system: string;
  /** A migrated store; closed by the benchmark. */
  store: Store;
  artifacts: ArtifactStore;
  runs: number;
  concurrency: number;
  /** Runs pushed through first, unmeasured, so JIT warm-up and statement preparation do not count. */
  warmupRuns: number;
  /** `kiln.submit` per run, or `kiln.submitMany` chunks (warm-up uses the same path). */
  submit: SubmitMode;
  /** Called as the measured phase starts and as it ends. */
  measuredPhase?: MeasuredPhase;
  /** Runs kiln with what `kiln serve` adds to every job: pino at info (lines dropped) and the Prometheus metrics. */
  serveObservability?: boolean;
}

/** Work around the measured phase (e.g. timing its statements); what `end` returns joins the result's `extra`. */
export interface MeasuredPhase {
  start(): void;
  end(): Record<string, unknown>;
}

/** Timestamps and call times collected while `recording` is on. */
interface Probe {
  recording: boolean;
  handlerStartMs: Map<string, number>;
  stageLatencyMs: number[];
  commitCallMs: number[];
  claimCallMs: number[];
  /** Claim calls that returned no job (each is still one write transaction). */
  emptyClaims: number;
  handlerMs: number[];
}

/**
 * Wraps the store so the end of each commit and each claim call can be timed. Only the
 * public port is touched; the extra cost is one Map lookup per call.
 */
function instrument(store: Store, probe: Probe): Store {
  const commit: JobsPort['commit'] = async (items) => {
    const t0 = performance.now();
    const results = await store.jobs.commit(items);
    const t1 = performance.now();
    for (const item of items) {
      if (item.type !== 'complete') continue;
      const started = probe.handlerStartMs.get(item.lease.jobId);
      probe.handlerStartMs.delete(item.lease.jobId);
      if (probe.recording && started !== undefined) {
        probe.commitCallMs.push(t1 - t0);
        probe.stageLatencyMs.push(t1 - started);
      }
    }
    return results;
  };
  const claim: JobsPort['claim'] = async (request) => {
    const t0 = performance.now();
    const jobs = await store.jobs.claim(request);
    if (!probe.recording) return jobs;
    if (jobs.length > 0) probe.claimCallMs.push(performance.now() - t0);
    else probe.emptyClaims++;
    return jobs;
  };
  return { ...store, jobs: { ...store.jobs, claim, commit } };
}

/** Counts succeeded runs and failed stage executions; resolves waiters when a target is reached. */
function createCounter(probe: Probe): { observer: EngineObserver; waitFor(total: number): Promise<void>; failures(): number } {
  let succeeded = 0;
  let failed = 0;
  let waiter: { total: number; resolve: () => void } | undefined;
  // Spread the no-op observer so events added to the port later need no change here.
  const observer: EngineObserver = {
    ...noopObserver,
    stageExecuted(e) {
      if (e.outcome !== 'succeeded') failed++;
      else if (probe.recording) probe.handlerMs.push(e.durationMs);
    },
    runStatus(_pipeline, status) {
      if (status !== 'succeeded') return;
      succeeded++;
      if (waiter && succeeded >= waiter.total) waiter.resolve();
    },
  };
  const waitFor = (total: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (succeeded >= total) return resolve();
      const timer = setTimeout(() => reject(new Error(`only ${succeeded}/${total} runs succeeded after ${PHASE_TIMEOUT_MS} ms (${failed} failed stage executions)`)), PHASE_TIMEOUT_MS);
      waiter = {
        total,
        resolve: () => {
          clearTimeout(timer);
          waiter = undefined;
          resolve();
        },
      };
    });
  return { observer, waitFor, failures: () => failed };
}

/** Calls `first`, then `second`, for every event. */
function bothObservers(first: EngineObserver, second: EngineObserver): EngineObserver {
  const events = Object.keys(noopObserver) as (keyof EngineObserver)[];
  return Object.fromEntries(
    events.map((event) => [
      event,
      (...args: unknown[]) => {
        (first[event] as (...a: unknown[]) => void)(...args);
        (second[event] as (...a: unknown[]) => void)(...args);
      },
    ]),
  ) as unknown as EngineObserver;
}

/** The logger and metrics observer `kiln serve` gives the engine, its lines written nowhere. */
function serveObservability(pipeline: ReturnType<typeof benchPipeline>, counter: EngineObserver): { logger: Logger; observer: EngineObserver } {
  const logger = createLogger({ level: 'info', format: 'json', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  const metrics = createMetrics();
  metrics.declarePipelines([pipeline]);
  return { logger, observer: bothObservers(metrics.observer, counter) };
}

/** The bench's 5-stage no-op pipeline (`bench-noop`); `onHandler` sees each stage job start. */
export function benchPipeline(concurrency: number, onHandler: (jobId: string) => void = () => {}) {
  const stages = Array.from({ length: STAGE_COUNT }, (_, i) => ({
    name: `s${i + 1}`,
    handler: (ctx: { job: { id: string } }) => {
      onHandler(ctx.job.id);
      return null;
    },
  }));
  return definePipeline({ name: PIPELINE, version: 1, defaults: { concurrency }, stages });
}

/** Submits `count` runs in a tight loop in `mode`; returns the loop's duration in ms. */
async function submitAll(kiln: Kiln, mode: SubmitMode, count: number, offset: number): Promise<number> {
  const t0 = performance.now();
  await submitHeads(mode, count, offset, {
    one: (n) => kiln.submit(PIPELINE, { n }),
    many: (ns) => kiln.submitMany(PIPELINE, ns.map((n) => ({ input: { n } }))),
  });
  return performance.now() - t0;
}

/** Runs the benchmark and returns its result line. */
export async function runKilnBench(options: KilnBenchOptions): Promise<EngineResult> {
  const rss = startRssSampler(50);
  const probe: Probe = { recording: false, handlerStartMs: new Map(), stageLatencyMs: [], commitCallMs: [], claimCallMs: [], emptyClaims: 0, handlerMs: [] };
  const counter = createCounter(probe);
  const store = instrument(options.store, probe);
  const pipeline = benchPipeline(options.concurrency, (jobId) => probe.handlerStartMs.set(jobId, performance.now()));
  const observability = options.serveObservability ? serveObservability(pipeline, counter.observer) : { observer: counter.observer };
  const kiln = createKiln({ store, artifacts: options.artifacts, pipelines: [pipeline], ...observability });
  const worker = kiln.createWorker({ pollMs: 5 });
  worker.start();
  try {
    await submitAll(kiln, options.submit, options.warmupRuns, 0);
    await counter.waitFor(options.warmupRuns);
    probe.recording = true;
    options.measuredPhase?.start();
    const cpu = startCpuMeter();
    const t0 = performance.now();
    const submitMs = await submitAll(kiln, options.submit, options.runs, options.warmupRuns);
    await counter.waitFor(options.warmupRuns + options.runs);
    const elapsedMs = performance.now() - t0;
    const cpuUsPerTransition = cpu.stop(options.runs * STAGE_COUNT);
    probe.recording = false;
    const phaseExtra = options.measuredPhase?.end() ?? {};
    if (counter.failures() > 0) throw new Error(`${counter.failures()} stage executions did not succeed`);
    return {
      system: options.system,
      runs: options.runs,
      concurrency: options.concurrency,
      stagesPerRun: STAGE_COUNT,
      elapsedMs: Math.round(elapsedMs),
      submitMs: Math.round(submitMs),
      runsPerSec: Math.round((options.runs / elapsedMs) * 1000 * 10) / 10,
      transitionsPerSec: Math.round(((options.runs * STAGE_COUNT) / elapsedMs) * 1000),
      stageLatency: summarize(probe.stageLatencyMs),
      peakRssMb: rss.stop(),
      cpuUsPerTransition,
      extra: {
        latencyBasis: 'handler start -> completeStage resolved (same job)',
        handlerMsFromObserver: summarize(probe.handlerMs),
        // Wall time around `await completeStage(...)`: includes waiting behind other jobs' microtasks.
        commitCallMs: summarize(probe.commitCallMs),
        claimCallMs: summarize(probe.claimCallMs),
        emptyClaimCalls: probe.emptyClaims,
        warmupRuns: options.warmupRuns,
        serveObservability: options.serveObservability ?? false,
        ...phaseExtra,
      },
    };
  } finally {
    await worker.stop(1_000);
    await options.store.close();
  }
}

/**
 * Warm-up size used by every system of the engine, PostgreSQL, Redis and scale suites: half the
 * runs, at least 200, at most 1,000,
 * so each is measured in its steady state. 100 runs (500 stage jobs) left kiln's JavaScript still
 * being optimised by V8 when the timed phase began: 2,000 bulk runs on the memory store measured
 * 6,435 / 7,279 / 6,618 runs/s after 100 warm-up runs and 7,083 / 11,045 / 11,368 after 1,000
 * (BullMQ, whose work is mostly in redis-server, moved less: 1,756 -> 2,072 runs/s, medians of 3).
 */
export function warmupRunsFor(runs: number): number {
  return Math.min(1000, Math.max(200, Math.round(runs / 2)));
}

