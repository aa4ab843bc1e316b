/**
 * Prometheus metrics. Each {@link createMetrics} call owns its own prom-client `Registry` (never
 * the global one), so several apps can live in one process (tests) without name clashes. Engine
 * events arrive through the {@link EngineObserver} it returns (engine-metrics.ts); queue depth,
 * parked runs and the store's health are read from the store at scrape time, worker utilization
 * from the process's worker. Metric names and labels are a public contract: dashboards and alerts
 * use them.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { QueueStats } from '../core/model.ts';
import type { EngineObserver } from '../core/observer.ts';
import { createEngineMetrics, type DeclaredPipeline } from './engine-metrics.ts';
import { registerLockGauges, type LockStatsSource } from './lock-metrics.ts';

export { STAGE_DURATION_BUCKETS_SECONDS, type DeclaredPipeline } from './engine-metrics.ts';
export type { LockStatsSource } from './lock-metrics.ts';

/** Reads per-queue stats (usually `kiln.queues()`); called once per scrape. */
export type QueueStatsSource = () => Promise<QueueStats[]>;

/** A worker's slots per queue (`Worker.slots()`); called once per scrape. */
export type WorkerSlotsSource = () => readonly { queue: string; busy: number; slots: number }[];

/** Options of {@link createMetrics}. */
export interface CreateMetricsOptions {
  /** Source of the queue gauges; can also be set later with `setQueueStats`. */
  queueStats?: QueueStatsSource;
  /** The `store` label of `kiln_store_up` (the store's name). @default store */
  storeName?: string;
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
  /** Sets the source of the store gauges; `storeName` labels `kiln_store_up` (@default the option's). */
  setQueueStats(fn: QueueStatsSource, storeName?: string): void;
  /** Sets the source of the lock gauges (usually `kiln.lockStats()`). */
  setLockStats(fn: LockStatsSource): void;
  /** Reports this worker's slots in the utilization gauges (one worker per process). */
  setWorkerSlots(fn: WorkerSlotsSource): void;
  /**
   * Creates the zero series of the registered pipelines' stages and queues, so that every panel
   * and `rate()` has a series from the first scrape (Prometheus's advice for known label values).
   */
  declarePipelines(pipelines: readonly DeclaredPipeline[]): void;
}

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
  const engine = createEngineMetrics(registry);
  let source = options.queueStats;
  let storeName = options.storeName ?? 'store';
  let workerSlots: WorkerSlotsSource | undefined;
  registerStoreGauges(registry, () => source, () => storeName);
  registerWorkerGauges(registry, () => workerSlots?.() ?? []);
  let lockSource = options.lockStats;
  registerLockGauges(registry, () => lockSource, sharedPerScrape);
  return {
    registry,
    observer: engine.observer,
    contentType: registry.contentType,
    render: async () => spellNaN(await registry.metrics()),
    setQueueStats(fn, name) {
      source = fn;
      if (name !== undefined) storeName = name;
    },
    setWorkerSlots(fn) {
      workerSlots = fn;
    },
    setLockStats(fn) {
      lockSource = fn;
    },
    declarePipelines: (pipelines) => engine.declare(pipelines),
  };
}

/** The pipeline of a queue `<pipeline>.<stage>` (stage names hold no dot; pipeline names may). */
function pipelineOfQueue(queue: string): string {
  const dot = queue.lastIndexOf('.');
  return dot > 0 ? queue.slice(0, dot) : queue;
}

/** A gauge whose samples are replaced at every scrape by `fill` (a vanished label set must not linger). */
function scrapedGauge<L extends string>(
  registry: Registry,
  config: { name: string; help: string; labelNames: readonly L[] },
  fill: (set: (labels: Record<L, string>, value: number) => void) => Promise<void> | void,
): void {
  new Gauge({
    ...config,
    registers: [registry],
    async collect() {
      const samples: [Record<L, string>, number][] = [];
      await fill((labels, value) => samples.push([labels, value]));
      this.reset();
      for (const [labels, value] of samples) this.set(labels as never, value);
    },
  });
}

/**
 * Gauges read from the store at scrape time: they share one `queueStats()` call per scrape. The
 * queue gauges stay empty when the read fails; `kiln_store_up` then reads 0.
 */
function registerStoreGauges(registry: Registry, source: () => QueueStatsSource | undefined, storeName: () => string): void {
  const errors = new Counter({
    name: 'kiln_queue_stats_errors_total',
    help: 'Scrapes whose queue stats could not be read from the store (queue gauges were left empty).',
    registers: [registry],
    // Waits for this scrape's read, so a failure is counted in the same scrape that lacks the gauges.
    async collect() {
      await snapshot();
    },
  });
  // Declared after `errors` but only called from collect(), i.e. after both exist.
  const snapshot = sharedPerScrape(async (): Promise<{ stats: QueueStats[]; up: boolean | null }> => {
    const fn = source();
    if (!fn) return { stats: [], up: null };
    try {
      return { stats: await fn(), up: true };
    } catch {
      errors.inc();
      return { stats: [], up: false };
    }
  });
  scrapedGauge(
    registry,
    { name: 'kiln_store_up', help: "1 when the store answered this scrape's queue stats read, 0 when it did not (the store is unavailable).", labelNames: ['store'] },
    async (set) => {
      const { up } = await snapshot();
      if (up !== null) set({ store: storeName() }, up ? 1 : 0);
    },
  );
  scrapedGauge(
    registry,
    { name: 'kiln_queue_jobs', help: 'Jobs per queue and state: ready (claimable now), scheduled (waiting for a backoff), leased, parked, dead.', labelNames: ['queue', 'state'] },
    async (set) => {
      for (const s of (await snapshot()).stats) for (const state of QUEUE_JOB_STATES) set({ queue: s.queue, state }, s[state]);
    },
  );
  scrapedGauge(
    registry,
    { name: 'kiln_queue_oldest_ready_age_seconds', help: 'Age of the oldest job ready to run now, per queue (0 when none); growth means workers fall behind.', labelNames: ['queue'] },
    async (set) => {
      for (const s of (await snapshot()).stats) set({ queue: s.queue }, s.oldestReadyAgeMs / 1000);
    },
  );
  scrapedGauge(
    registry,
    { name: 'kiln_queue_paused', help: '1 when the queue is paused (nothing is claimed from it), else 0.', labelNames: ['queue'] },
    async (set) => {
      for (const s of (await snapshot()).stats) set({ queue: s.queue }, s.paused ? 1 : 0);
    },
  );
  scrapedGauge(
    registry,
    { name: 'kiln_runs_parked', help: 'Runs waiting for an operator (parked after intervention errors), per pipeline: each holds one parked job.', labelNames: ['pipeline'] },
    async (set) => {
      const parked = new Map<string, number>();
      for (const s of (await snapshot()).stats) parked.set(pipelineOfQueue(s.queue), (parked.get(pipelineOfQueue(s.queue)) ?? 0) + s.parked);
      for (const [pipeline, count] of parked) set({ pipeline }, count);
    },
  );
}

/** This process's worker slots per queue: busy, total, and their ratio (for autoscalers). */
function registerWorkerGauges(registry: Registry, slots: WorkerSlotsSource): void {
  scrapedGauge(
    registry,
    { name: 'kiln_worker_slots', help: "Slots of this process's worker per queue (the stage's concurrency).", labelNames: ['queue'] },
    (set) => {
      for (const s of slots()) set({ queue: s.queue }, s.slots);
    },
  );
  scrapedGauge(
    registry,
    { name: 'kiln_worker_busy_slots', help: "Slots of this process's worker running a handler now, per queue.", labelNames: ['queue'] },
    (set) => {
      for (const s of slots()) set({ queue: s.queue }, s.busy);
    },
  );
  scrapedGauge(
    registry,
    { name: 'kiln_worker_utilization', help: "Busy slots / slots of this process's worker per queue, 0 to 1; across processes use sum(kiln_worker_busy_slots) / sum(kiln_worker_slots).", labelNames: ['queue'] },
    (set) => {
      for (const s of slots()) set({ queue: s.queue }, s.slots > 0 ? s.busy / s.slots : 0);
    },
  );
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
 * metrics of a scrape concurrently, so the store gauges get one store query, not one each.
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
