/**
 * Prometheus metrics. Each {@link createMetrics} call owns its own prom-client `Registry` (never
 * the global one), so several apps can live in one process (tests) without name clashes. Engine
 * events arrive through the {@link EngineObserver} it returns; queue depth is read from the store
 * at scrape time. Metric names and labels are a public contract: dashboards and alerts use them.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueueStats } from '../core/model.ts';
import type { EngineObserver, StageExecution } from '../core/observer.ts';
import { createLockEventMetrics, registerLockGauges, type LockStatsSource } from './lock-metrics.ts';

export type { LockStatsSource } from './lock-metrics.ts';

/** Reads per-queue stats (usually `kiln.queues()`); called once per scrape. */
export type QueueStatsSource = () => Promise<QueueStats[]>;

/** Options of {@link createMetrics}. */
export interface CreateMetricsOptions {
  /** Source of the queue gauges; can also be set later with `setQueueStats`. */
  queueStats?: QueueStatsSource;
  /** Source of the lock gauges; can also be set later with `setLockStats`. */
  lockStats?: LockStatsSource;
  /** Metric names are fixed (a public contract), so no prefix option exists. */
  prefix?: never;
}

/** The metrics of one app. */
export interface KilnMetrics {
  readonly registry: Registry;
  /** Feeds engine events into the counters; never throws. */
  readonly observer: EngineObserver;
  /** `Content-Type` of {@link KilnMetrics.render}'s output. */
  readonly contentType: string;
  /** Prometheus text exposition of every metric, collecting queue stats first. */
  render(): Promise<string>;
  setQueueStats(fn: QueueStatsSource): void;
  setLockStats(fn: LockStatsSource): void;
}

/** Stage duration buckets, seconds: 1 ms to 60 s. */
export const STAGE_DURATION_BUCKETS_SECONDS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Job states of the `kiln_queue_jobs{state}` gauge, as named in {@link QueueStats}. */
export const QUEUE_JOB_STATES = ['ready', 'scheduled', 'leased', 'parked', 'dead'] as const;

/** prom-client default metrics that are gauges despite their `_total` suffix. */
const GAUGES_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** Creates a registry with kiln's metrics and the default process metrics. */
export function createMetrics(options: CreateMetricsOptions = {}): KilnMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // These default gauges end in _total, which Prometheus reserves for counters (promtool rejects
  // them), so they are left out.
  for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  const observer = createObserverMetrics(registry);
  let source = options.queueStats;
  let lockSource = options.lockStats;
  registerQueueGauges(registry, () => source);
  registerLockGauges(registry, () => lockSource, sharedPerScrape);
  return {
    registry,
    observer,
    contentType: registry.contentType,
    render: async () => spellNaN(await registry.metrics()),
    setQueueStats(fn) {
      source = fn;
    },
    setLockStats(fn) {
      lockSource = fn;
    },
  };
}

/** Counters and the histogram fed by engine events, wrapped as an observer. */
function createObserverMetrics(registry: Registry): EngineObserver {
  const m = createEventMetrics(registry);
  const compensation = createCompensationAndLocalCacheMetrics(registry);
  return guarded({
    ...createLockEventMetrics(registry),
    stageExecuted(e: StageExecution) {
      const stage = e.rollback ? `${e.stage}:rollback` : e.stage;
      m.executions.inc({ pipeline: e.pipeline, stage, outcome: e.outcome });
      if (Number.isFinite(e.durationMs)) m.duration.observe({ pipeline: e.pipeline, stage }, Math.max(0, e.durationMs) / 1000);
      // Any throw that is not a StageFailure is retried as transient (Temporal's rule), hence the fallback.
      if (e.outcome === 'retried') m.retries.inc({ pipeline: e.pipeline, stage, error_class: e.errorClass ?? 'transient' });
      compensation.stageExecuted(e);
    },
    idempotentSkip: (pipeline, stage) => m.skips.inc({ pipeline, stage }),
    redelivered(queue, count) {
      if (count > 0) m.redeliveries.inc({ queue }, count);
    },
    runStatus: (pipeline, status) => m.runs.inc({ pipeline, status }),
    handlerAbandoned: (pipeline, stage) => m.abandoned.inc({ pipeline, stage }),
    orphanedTempsCollected(count) {
      if (count > 0) m.orphanedTemps.inc(count);
    },
    cacheRequest: (cache, result) => m.cacheRequests.inc({ cache, result }),
    cacheBuild: (cache) => m.cacheBuilds.inc({ cache }),
    duplicatePublishPrevented(pipeline, count) {
      if (count > 0) m.publishPrevented.inc({ pipeline }, count);
    },
    localCacheRequest: compensation.localCacheRequest,
  });
}

/** The metrics engine events feed; names, labels and HELP texts are the public contract. */
function createEventMetrics(registry: Registry) {
  const registers = [registry];
  const executions = new Counter({
    name: 'kiln_stage_executions_total',
    help: 'Stage executions by how they ended (succeeded, retried, dead_lettered, failed, parked, lease_lost, cancelled); rollbacks use stage "<stage>:rollback".',
    labelNames: ['pipeline', 'stage', 'outcome'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'kiln_stage_duration_seconds',
    help: 'Wall time of stage handler executions, whatever their outcome.',
    labelNames: ['pipeline', 'stage'] as const,
    buckets: [...STAGE_DURATION_BUCKETS_SECONDS],
    registers,
  });
  const retries = new Counter({
    name: 'kiln_stage_retries_total',
    help: 'Failed stage attempts scheduled for a retry, by error class (transient, intervention).',
    labelNames: ['pipeline', 'stage', 'error_class'] as const,
    registers,
  });
  const skips = new Counter({
    name: 'kiln_idempotent_skips_total',
    help: 'Jobs acknowledged without running the handler because their idempotency key was already in the ledger.',
    labelNames: ['pipeline', 'stage'] as const,
    registers,
  });
  const redeliveries = new Counter({
    name: 'kiln_redeliveries_total',
    help: 'Jobs handed out again after their lease expired (a worker crashed or stalled).',
    labelNames: ['queue'] as const,
    registers,
  });
  const abandoned = new Counter({
    name: 'kiln_handlers_abandoned_total',
    help: 'Handlers that ignored their abort signal after a timeout and were abandoned still running.',
    labelNames: ['pipeline', 'stage'] as const,
    registers,
  });
  const runs = new Counter({
    name: 'kiln_runs_total',
    help: 'Runs reaching each status (submitted runs count as queued).',
    labelNames: ['pipeline', 'status'] as const,
    registers,
  });
  const orphanedTemps = new Counter({
    name: 'kiln_orphaned_temps_collected_total',
    help: 'Temp files left by crashed writers that the reaper removed after the grace period.',
    registers,
  });
  const cacheRequests = new Counter({
    name: 'kiln_cache_requests_total',
    help: 'Single-flight cache lookups by result: hit, miss (this caller built), stale (served while revalidating), negative (cached permanent failure), wait (got another caller\'s build).',
    labelNames: ['cache', 'result'] as const,
    registers,
  });
  const cacheBuilds = new Counter({
    name: 'kiln_cache_builds_total',
    help: 'Cache builds started (a caller took the builder lease), revalidations included.',
    labelNames: ['cache'] as const,
    registers,
  });
  const publishPrevented = new Counter({
    name: 'kiln_duplicate_publish_prevented_total',
    help: 'Publications refused by compare-and-set because a same-or-newer one was already in place, or because the lock fence they were made under was no longer current.',
    labelNames: ['pipeline'] as const,
    registers,
  });
  return { executions, duration, retries, skips, redeliveries, abandoned, runs, orphanedTemps, cacheRequests, cacheBuilds, publishPrevented };
}

/** The observer port must never throw (it runs on the commit path); a metrics bug must not fail a job. */
function guarded(observer: EngineObserver): EngineObserver {
  const wrap =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A): void => {
      try {
        fn(...args);
      } catch {
        // Dropping one sample is the lesser harm.
      }
    };
  return Object.fromEntries(Object.entries(observer).map(([name, fn]) => [name, wrap(fn as (...args: unknown[]) => void)])) as unknown as EngineObserver;
}

/** Gauges read from the store at scrape time; the three share one `queueStats()` call per scrape. */
function registerQueueGauges(registry: Registry, source: () => QueueStatsSource | undefined): void {
  const registers = [registry];
  const errors = new Counter({
    name: 'kiln_queue_stats_errors_total',
    help: 'Scrapes whose queue stats could not be read from the store (queue gauges were left empty).',
    registers,
    // Waits for this scrape's read, so a failure is counted in the same scrape that lacks the gauges.
    async collect() {
      await snapshot();
    },
  });
  // Declared after `errors` but only called from collect(), i.e. after both exist.
  const snapshot = sharedPerScrape(async () => {
    const fn = source();
    if (!fn) return [];
    try {
      return await fn();
    } catch {
      errors.inc();
      return [];
    }
  });
  new Gauge({
    name: 'kiln_queue_jobs',
    help: 'Jobs per queue and state: ready (claimable now), scheduled (waiting for a backoff), leased, parked, dead.',
    labelNames: ['queue', 'state'] as const,
    registers,
    async collect() {
      const stats = await snapshot();
      // Reset first: a queue that vanished must not keep reporting its last depth.
      this.reset();
      for (const s of stats) for (const state of QUEUE_JOB_STATES) this.set({ queue: s.queue, state }, s[state]);
    },
  });
  new Gauge({
    name: 'kiln_queue_oldest_ready_age_seconds',
    help: 'Age of the oldest job ready to run now, per queue (0 when none); growth means workers fall behind.',
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      const stats = await snapshot();
      this.reset();
      for (const s of stats) this.set({ queue: s.queue }, s.oldestReadyAgeMs / 1000);
    },
  });
  new Gauge({
    name: 'kiln_queue_paused',
    help: '1 when the queue is paused (nothing is claimed from it), else 0.',
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      const stats = await snapshot();
      this.reset();
      for (const s of stats) this.set({ queue: s.queue }, s.paused ? 1 : 0);
    },
  });
}

/**
 * prom-client 15 prints NaN as `Nan` (e.g. event-loop lag before its first sample). Prometheus
 * parses either, but the exposition format and OpenMetrics spell it `NaN`, and strict parsers do too.
 */
function spellNaN(text: string): string {
  return text.replace(/^([^#\n].*) Nan$/gm, '$1 NaN');
}

/**
 * Calls `load` once for all callers that ask while a call is in flight. prom-client collects all
 * metrics of a scrape concurrently, so the three queue gauges get one store query, not three.
 */
function sharedPerScrape<T>(load: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | null = null;
  return () => {
    inFlight ??= load().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
}

// --- Rollback failures and per-process cache LRUs (command stages, issue 11) ---------------------
// Kept in a block of their own: other metric families are added above this line.

/** `kiln_rollback_failures_total` and `kiln_local_cache_requests_total`, fed by two observer events. */
function createCompensationAndLocalCacheMetrics(registry: Registry): Pick<EngineObserver, 'stageExecuted' | 'localCacheRequest'> {
  const registers = [registry];
  const rollbackFailures = new Counter({
    name: 'kiln_rollback_failures_total',
    help: 'Compensations (rollback jobs) that kept failing after their retries (or failed permanently) and parked their run for an operator.',
    labelNames: ['pipeline', 'stage'] as const,
    registers,
  });
  const localCacheRequests = new Counter({
    name: 'kiln_local_cache_requests_total',
    help: 'Lookups in a per-process LRU in front of the single-flight cache: hit (served from this process), miss (asked the shared cache).',
    labelNames: ['cache', 'result'] as const,
    registers,
  });
  return {
    stageExecuted(e) {
      if (e.rollback && e.outcome === 'parked') rollbackFailures.inc({ pipeline: e.pipeline, stage: e.stage });
    },
    localCacheRequest: (cache, result) => localCacheRequests.inc({ cache, result }),
  };
}
