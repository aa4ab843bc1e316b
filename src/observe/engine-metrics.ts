/**
 * The counters and histograms engine events feed (through the {@link EngineObserver} port), and
 * their zero series for the stages a process knows, so that `rate()` and the board's panels see
 * a series from the first scrape instead of from the first event. Names, labels and HELP texts
 * are a public contract: dashboards and alerts use them (README "Metrics", deploy/).
 */
import type { Registry } from 'prom-client';
import type { RunStatus } from '../core/model.ts';
import { ADMISSION_CODES } from '../core/errors.ts';
import { StageOutcome, type EngineObserver, type StageExecution } from '../core/observer.ts';
import { BoundCounter, BoundHistogram, type CounterSeries, type HistogramSeries } from './bound-metrics.ts';
import { boundedLabel } from './bounded-label.ts';
import { createLockEventMetrics } from './lock-metrics.ts';

/** Stage duration buckets, seconds: 1 ms to 60 s. */
export const STAGE_DURATION_BUCKETS_SECONDS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Enqueue-to-done buckets, seconds: 5 ms to 1 h (queue waits and backoffs included). */
export const STAGE_LATENCY_BUCKETS_SECONDS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** Run duration buckets, seconds: 10 ms to 1 day. */
export const RUN_DURATION_BUCKETS_SECONDS: readonly number[] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400];
/** Attempts a stage needed to succeed. */
export const ATTEMPT_BUCKETS: readonly number[] = [1, 2, 3, 4, 5, 7, 10, 15, 20, 30];

/** Distinct tenants (and render profiles) a process labels before counting the rest as `other`. */
export const MAX_TENANT_LABELS = 50;
export const MAX_PROFILE_LABELS = 20;

/** Error classes a retry is counted under. */
const RETRY_CLASSES = ['transient', 'intervention'] as const;
/** Run statuses a run can end in (or wait in for a replay), as `kiln_run_duration_seconds{status}`. */
const FINISHED_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'dead_lettered', 'cancelled'];
/** Every status of `kiln_runs_total`. */
const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'succeeded', 'failed', 'dead_lettered', 'cancelled', 'superseded', 'parked'];

/** The pipelines a process registered, as {@link EngineMetrics.declare} reads them. */
export interface DeclaredPipeline {
  readonly name: string;
  readonly stages: readonly { readonly name: string; readonly rollback?: unknown }[];
}

/** The event-fed metrics of one registry. */
export interface EngineMetrics {
  /** Feeds engine events into the metrics; never throws. */
  readonly observer: EngineObserver;
  /** Creates the zero series of every stage, queue and pipeline of `pipelines`. */
  declare(pipelines: readonly DeclaredPipeline[]): void;
}

const queueOf = (pipeline: string, stage: string): string => `${pipeline}.${stage}`;

/** Registers the event-fed metrics on `registry`. */
export function createEngineMetrics(registry: Registry): EngineMetrics {
  const stage = createStageMetrics(registry);
  const queue = createQueueMetrics(registry);
  const run = createRunMetrics(registry);
  const tenantLabel = boundedLabel(MAX_TENANT_LABELS);
  const profileLabel = boundedLabel(MAX_PROFILE_LABELS);

  /** Each stage's (and compensation's) per-execution series, resolved on its first execution. */
  const executed = new Map<string, ExecutionSeries>();
  const executionSeries = (e: StageExecution): ExecutionSeries => {
    const key = `${e.pipeline}\u0000${e.stage}\u0000${e.rollback ? 'r' : ''}`;
    let series = executed.get(key);
    if (series === undefined) executed.set(key, (series = resolveExecutionSeries(stage, queue, e.pipeline, e.stage, e.rollback)));
    return series;
  };

  const stageExecuted = (e: StageExecution): void => {
    const series = executionSeries(e);
    let outcome = series.outcomes.get(e.outcome);
    if (outcome === undefined) series.outcomes.set(e.outcome, (outcome = stage.executions.series({ pipeline: e.pipeline, stage: series.name, outcome: e.outcome })));
    outcome.inc();
    if (Number.isFinite(e.durationMs)) series.duration.observe(Math.max(0, e.durationMs) / 1000);
    // Any throw that is not a StageFailure is retried as transient (Temporal's rule), hence the fallback.
    if (e.outcome === 'retried') stage.retries.inc({ pipeline: e.pipeline, stage: series.name, error_class: e.errorClass ?? 'transient' });
    if (e.sinceEnqueuedMs !== undefined) series.acked.inc();
    // A compensation that keeps failing parks its run (it used to be dead-lettered).
    if (e.rollback && (e.outcome === 'parked' || e.outcome === 'dead_lettered' || e.outcome === 'failed')) stage.rollbackFailures.inc({ pipeline: e.pipeline, stage: e.stage });
    if (e.rollback || e.outcome !== 'succeeded') return;
    if (e.attempt !== undefined) series.attempts.observe(e.attempt);
    if (e.sinceEnqueuedMs !== undefined) series.latency.observe(e.sinceEnqueuedMs / 1000);
  };

  const observer = guarded({
    ...createLockEventMetrics(registry),
    stageExecuted,
    idempotentSkip: (pipeline, name) => stage.skips.inc({ pipeline, stage: name }),
    redelivered: (name, count) => count > 0 && queue.redeliveries.inc({ queue: name }, count),
    runStatus: (pipeline, status, tenant) => run.runs.inc({ pipeline, status, tenant: tenant ? tenantLabel(tenant) : '' }),
    runFinished: (pipeline, status, durationMs) => run.duration.observe({ pipeline, status }, Math.max(0, durationMs) / 1000),
    submitDeduplicated: (pipeline, count) => count > 0 && run.dedupHits.inc({ pipeline }, count),
    submitRefused: (pipeline, code, count) => run.refused.inc({ pipeline, code }, count),
    jobsClaimed: (name, count) => count > 0 && queue.claimed.inc({ queue: name }, count),
    stageTimedOut: (pipeline, name) => stage.timeouts.inc({ pipeline, stage: name }),
    heartbeatLost: (name) => queue.heartbeatLosses.inc({ queue: name }),
    artifactWriteFailed: () => run.artifactFailures.inc(),
    publicationsRequested: (pipeline, profiles) => {
      for (const profile of profiles) run.publishRequests.inc({ pipeline, profile: profileLabel(profile) });
    },
    handlerAbandoned: (pipeline, name) => stage.abandoned.inc({ pipeline, stage: name }),
    orphanedTempsCollected: (count) => count > 0 && run.orphanedTemps.inc(count),
    cacheRequest: (cache, result) => run.cacheRequests.inc({ cache, result }),
    cacheBuild: (cache) => run.cacheBuilds.inc({ cache }),
    duplicatePublishPrevented: (pipeline, count) => count > 0 && run.publishPrevented.inc({ pipeline }, count),
    localCacheRequest: (cache, result) => run.localCacheRequests.inc({ cache, result }),
  });

  return {
    observer,
    declare(pipelines) {
      for (const pipeline of pipelines) {
        for (const s of pipeline.stages) {
          declareStage(stage, pipeline.name, s.name, s.rollback !== undefined);
          declareQueue(queue, queueOf(pipeline.name, s.name));
        }
        declarePipeline(run, pipeline.name);
      }
    },
  };
}

type StageMetrics = ReturnType<typeof createStageMetrics>;
type QueueMetrics = ReturnType<typeof createQueueMetrics>;
type RunMetrics = ReturnType<typeof createRunMetrics>;

/** The series one stage's executions update (a compensation's are its `<stage>:rollback` ones). */
interface ExecutionSeries {
  /** The stage label of its executions and durations. */
  name: string;
  outcomes: Map<string, CounterSeries>;
  duration: HistogramSeries;
  acked: CounterSeries;
  attempts: HistogramSeries;
  latency: HistogramSeries;
}

function resolveExecutionSeries(m: StageMetrics, q: QueueMetrics, pipeline: string, stage: string, rollback: boolean | undefined): ExecutionSeries {
  const name = rollback ? `${stage}:rollback` : stage;
  return {
    name,
    outcomes: new Map(),
    duration: m.duration.series({ pipeline, stage: name }),
    acked: q.acked.series({ queue: queueOf(pipeline, stage) }),
    attempts: m.attempts.series({ pipeline, stage }),
    latency: m.latency.series({ pipeline, stage }),
  };
}

function declareStage(m: StageMetrics, pipeline: string, stage: string, hasRollback: boolean): void {
  for (const name of hasRollback ? [stage, `${stage}:rollback`] : [stage]) {
    for (const outcome of Object.values(StageOutcome)) m.executions.inc({ pipeline, stage: name, outcome }, 0);
    m.duration.zero({ pipeline, stage: name });
  }
  for (const errorClass of RETRY_CLASSES) m.retries.inc({ pipeline, stage, error_class: errorClass }, 0);
  for (const counter of [m.skips, m.abandoned, m.timeouts]) counter.inc({ pipeline, stage }, 0);
  if (hasRollback) m.rollbackFailures.inc({ pipeline, stage }, 0);
  m.latency.zero({ pipeline, stage });
  m.attempts.zero({ pipeline, stage });
}

function declareQueue(m: QueueMetrics, queue: string): void {
  for (const counter of [m.claimed, m.acked, m.redeliveries, m.heartbeatLosses]) counter.inc({ queue }, 0);
}

function declarePipeline(m: RunMetrics, pipeline: string): void {
  for (const status of RUN_STATUSES) m.runs.inc({ pipeline, status, tenant: '' }, 0);
  for (const status of FINISHED_STATUSES) m.duration.zero({ pipeline, status });
  for (const counter of [m.dedupHits, m.publishPrevented]) counter.inc({ pipeline }, 0);
  for (const code of ADMISSION_CODES) m.refused.inc({ pipeline, code }, 0);
}

/** Metric constructors bound to one registry (engine events are per job: see bound-metrics.ts). */
function metricsOn(registry: Registry) {
  const registers = [registry];
  return {
    counter: <L extends string>(name: string, help: string, labelNames: readonly L[] = []) => new BoundCounter<L>({ name, help, labelNames, registers }),
    histogram: <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: readonly number[]) =>
      new BoundHistogram<L>({ name, help, labelNames, buckets, registers }),
  };
}

const STAGE_LABELS = ['pipeline', 'stage'] as const;

/** Per stage: executions, durations, latency, attempts, retries and the rarer events. */
function createStageMetrics(registry: Registry) {
  const { counter, histogram } = metricsOn(registry);
  return {
    executions: counter(
      'kiln_stage_executions_total',
      'Stage executions by how they ended (succeeded, retried, dead_lettered, failed, parked, lease_lost, cancelled); rollbacks use stage "<stage>:rollback".',
      ['pipeline', 'stage', 'outcome'],
    ),
    duration: histogram('kiln_stage_duration_seconds', 'Wall time of stage handler executions, whatever their outcome.', STAGE_LABELS, STAGE_DURATION_BUCKETS_SECONDS),
    latency: histogram(
      'kiln_stage_latency_seconds',
      'Enqueue-to-done time of stages that succeeded: from their job entering the queue to its commit, queue waits, backoffs and failed attempts included.',
      STAGE_LABELS,
      STAGE_LATENCY_BUCKETS_SECONDS,
    ),
    attempts: histogram(
      'kiln_stage_attempts_before_success',
      'Attempts a stage took to succeed (1 when its first attempt did; redeliveries count as attempts).',
      STAGE_LABELS,
      ATTEMPT_BUCKETS,
    ),
    retries: counter('kiln_stage_retries_total', 'Failed stage attempts scheduled for a retry, by error class (transient, intervention).', ['pipeline', 'stage', 'error_class']),
    skips: counter('kiln_idempotent_skips_total', 'Jobs acknowledged without running the handler because their idempotency key was already in the ledger.', STAGE_LABELS),
    abandoned: counter('kiln_handlers_abandoned_total', 'Handlers that ignored their abort signal after a timeout and were abandoned still running.', STAGE_LABELS),
    timeouts: counter('kiln_stage_timeouts_total', 'Stage attempts aborted because they ran past the stage timeout (timeoutMs).', STAGE_LABELS),
    rollbackFailures: counter(
      'kiln_rollback_failures_total',
      'Compensations (rollback jobs) that kept failing after their retries, or failed permanently, and parked their run for an operator (resumable).',
      STAGE_LABELS,
    ),
  };
}

/** Per queue: claims, acknowledgements, redeliveries and heartbeat losses. */
function createQueueMetrics(registry: Registry) {
  const { counter } = metricsOn(registry);
  const labels = ['queue'] as const;
  return {
    claimed: counter('kiln_jobs_claimed_total', 'Jobs claimed by workers of this process (redeliveries included).', labels),
    acked: counter(
      'kiln_jobs_acked_total',
      'Job attempts whose outcome the store committed (succeeded, retried, parked, dead-lettered or failed); refused commits are not acknowledgements.',
      labels,
    ),
    redeliveries: counter('kiln_redeliveries_total', 'Jobs handed out again after their lease expired (a worker crashed or stalled).', labels),
    heartbeatLosses: counter('kiln_heartbeat_losses_total', 'Heartbeats that found their lease lost (expired and taken over): the handler was aborted.', labels),
  };
}

/** Per pipeline: runs, their duration, submissions, publications, caches and artifacts. */
function createRunMetrics(registry: Registry) {
  const { counter, histogram } = metricsOn(registry);
  return {
    runs: counter(
      'kiln_runs_total',
      `Runs reaching each status (submitted runs count as queued), by tenant (empty for none; the first ${MAX_TENANT_LABELS} tenants a process sees, later ones as "other").`,
      ['pipeline', 'status', 'tenant'],
    ),
    duration: histogram(
      'kiln_run_duration_seconds',
      'Time from submission to the end of runs that left running (succeeded, failed, dead_lettered, cancelled), by that status.',
      ['pipeline', 'status'],
      RUN_DURATION_BUCKETS_SECONDS,
    ),
    dedupHits: counter('kiln_submit_dedup_hits_total', 'Submissions answered with the run that already held their idempotency key (no new run).', ['pipeline']),
    refused: counter(
      'kiln_submit_refused_total',
      'Runs whose submission an admission limit refused with 429 (code: TENANT_IN_FLIGHT_LIMIT, TENANT_RATE_LIMITED, QUEUE_BACKLOG_FULL); nothing was queued.',
      ['pipeline', 'code'],
    ),
    publishRequests: counter(
      'kiln_publish_requests_total',
      `Publications requested by committed stages, by render profile (the first ${MAX_PROFILE_LABELS} profiles, later ones as "other"); refusals are included (see kiln_duplicate_publish_prevented_total).`,
      ['pipeline', 'profile'],
    ),
    publishPrevented: counter('kiln_duplicate_publish_prevented_total', 'Publications refused by compare-and-set because a same-or-newer one was already in place.', ['pipeline']),
    artifactFailures: counter(
      'kiln_artifact_commit_failures_total',
      'Artifact writes (temp file, fsync, rename) that failed; oversized or invalid writes the store refused are not counted.',
    ),
    orphanedTemps: counter('kiln_orphaned_temps_collected_total', 'Temp files left by crashed writers that the reaper removed after the grace period.'),
    cacheRequests: counter(
      'kiln_cache_requests_total',
      "Single-flight cache lookups by result: hit, miss (this caller built), stale (served while revalidating), negative (cached permanent failure), wait (got another caller's build).",
      ['cache', 'result'],
    ),
    cacheBuilds: counter('kiln_cache_builds_total', 'Cache builds started (a caller took the builder lease), revalidations included.', ['cache']),
    localCacheRequests: counter(
      'kiln_local_cache_requests_total',
      'Lookups in a per-process LRU in front of the single-flight cache: hit (served from this process), miss (asked the shared cache).',
      ['cache', 'result'],
    ),
  };
}

/** The observer port must never throw (it runs on the commit path); a metrics bug must not fail a job. */
function guarded(observer: { [K in keyof EngineObserver]: (...args: Parameters<EngineObserver[K]>) => unknown }): EngineObserver {
  const out: Partial<Record<keyof EngineObserver, (...args: never[]) => void>> = {};
  for (const [name, fn] of Object.entries(observer) as [keyof EngineObserver, (...args: unknown[]) => unknown][]) {
    out[name] = (...args: unknown[]): void => {
      try {
        fn(...args);
      } catch {
        // Dropping one sample is the lesser harm.
      }
    };
  }
  return out as EngineObserver;
}
