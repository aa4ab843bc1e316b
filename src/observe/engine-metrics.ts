/**
 * The counters and histograms engine events feed (through the {@link EngineObserver} port), and
 * their zero series for the stages a process knows, so that `rate()` and the board's panels see
 * a series from the first scrape instead of from the first event. Names, labels and HELP texts
 * are a public contract: dashboards and alerts use them (README "Metrics", deploy/).
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { RunStatus } from '../core/model.ts';
import { StageOutcome, type EngineObserver, type StageExecution } from '../core/observer.ts';
import { boundedLabel } from './bounded-label.ts';

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

  const stageExecuted = (e: StageExecution): void => {
    const name = e.rollback ? `${e.stage}:rollback` : e.stage;
    stage.executions.inc({ pipeline: e.pipeline, stage: name, outcome: e.outcome });
    if (Number.isFinite(e.durationMs)) stage.duration.observe({ pipeline: e.pipeline, stage: name }, Math.max(0, e.durationMs) / 1000);
    // Any throw that is not a StageFailure is retried as transient (Temporal's rule), hence the fallback.
    if (e.outcome === 'retried') stage.retries.inc({ pipeline: e.pipeline, stage: name, error_class: e.errorClass ?? 'transient' });
    if (e.sinceEnqueuedMs !== undefined) queue.acked.inc({ queue: queueOf(e.pipeline, e.stage) });
    if (e.rollback && (e.outcome === 'dead_lettered' || e.outcome === 'failed')) stage.rollbackFailures.inc({ pipeline: e.pipeline, stage: e.stage });
    if (e.rollback || e.outcome !== 'succeeded') return;
    if (e.attempt !== undefined) stage.attempts.observe({ pipeline: e.pipeline, stage: e.stage }, e.attempt);
    if (e.sinceEnqueuedMs !== undefined) stage.latency.observe({ pipeline: e.pipeline, stage: e.stage }, e.sinceEnqueuedMs / 1000);
  };

  const observer = guarded({
    stageExecuted,
    idempotentSkip: (pipeline, name) => stage.skips.inc({ pipeline, stage: name }),
    redelivered: (name, count) => count > 0 && queue.redeliveries.inc({ queue: name }, count),
    runStatus: (pipeline, status, tenant) => run.runs.inc({ pipeline, status, tenant: tenant ? tenantLabel(tenant) : '' }),
    runFinished: (pipeline, status, durationMs) => run.duration.observe({ pipeline, status }, Math.max(0, durationMs) / 1000),
    submitDeduplicated: (pipeline, count) => count > 0 && run.dedupHits.inc({ pipeline }, count),
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
}

/** Per stage: executions, durations, latency, attempts, retries and the rarer events. */
function createStageMetrics(registry: Registry) {
  const registers = [registry];
  const perStage = (name: string, help: string) => new Counter({ name, help, labelNames: ['pipeline', 'stage'] as const, registers });
  return {
    executions: new Counter({
      name: 'kiln_stage_executions_total',
      help: 'Stage executions by how they ended (succeeded, retried, dead_lettered, failed, parked, lease_lost, cancelled); rollbacks use stage "<stage>:rollback".',
      labelNames: ['pipeline', 'stage', 'outcome'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'kiln_stage_duration_seconds',
      help: 'Wall time of stage handler executions, whatever their outcome.',
      labelNames: ['pipeline', 'stage'] as const,
      buckets: [...STAGE_DURATION_BUCKETS_SECONDS],
      registers,
    }),
    latency: new Histogram({
      name: 'kiln_stage_latency_seconds',
      help: 'Enqueue-to-done time of stages that succeeded: from their job entering the queue to its commit, queue waits, backoffs and failed attempts included.',
      labelNames: ['pipeline', 'stage'] as const,
      buckets: [...STAGE_LATENCY_BUCKETS_SECONDS],
      registers,
    }),
    attempts: new Histogram({
      name: 'kiln_stage_attempts_before_success',
      help: 'Attempts a stage took to succeed (1 when its first attempt did; redeliveries count as attempts).',
      labelNames: ['pipeline', 'stage'] as const,
      buckets: [...ATTEMPT_BUCKETS],
      registers,
    }),
    retries: new Counter({
      name: 'kiln_stage_retries_total',
      help: 'Failed stage attempts scheduled for a retry, by error class (transient, intervention).',
      labelNames: ['pipeline', 'stage', 'error_class'] as const,
      registers,
    }),
    skips: perStage('kiln_idempotent_skips_total', 'Jobs acknowledged without running the handler because their idempotency key was already in the ledger.'),
    abandoned: perStage('kiln_handlers_abandoned_total', 'Handlers that ignored their abort signal after a timeout and were abandoned still running.'),
    timeouts: perStage('kiln_stage_timeouts_total', 'Stage attempts aborted because they ran past the stage timeout (timeoutMs).'),
    rollbackFailures: perStage('kiln_rollback_failures_total', 'Rollbacks (compensations) of a stage that failed for good (attempts ran out or a permanent error); the chain of compensations stops there.'),
  };
}

/** Per queue: claims, acknowledgements, redeliveries and heartbeat losses. */
function createQueueMetrics(registry: Registry) {
  const registers = [registry];
  const perQueue = (name: string, help: string) => new Counter({ name, help, labelNames: ['queue'] as const, registers });
  return {
    claimed: perQueue('kiln_jobs_claimed_total', 'Jobs claimed by workers of this process (redeliveries included).'),
    acked: perQueue('kiln_jobs_acked_total', 'Job attempts whose outcome the store committed (succeeded, retried, parked, dead-lettered or failed); refused commits are not acknowledgements.'),
    redeliveries: perQueue('kiln_redeliveries_total', 'Jobs handed out again after their lease expired (a worker crashed or stalled).'),
    heartbeatLosses: perQueue('kiln_heartbeat_losses_total', 'Heartbeats that found their lease lost (expired and taken over): the handler was aborted.'),
  };
}

/** Per pipeline: runs, their duration, submissions, publications, caches and artifacts. */
function createRunMetrics(registry: Registry) {
  const registers = [registry];
  return {
    runs: new Counter({
      name: 'kiln_runs_total',
      help: `Runs reaching each status (submitted runs count as queued), by tenant (empty for none; the first ${MAX_TENANT_LABELS} tenants a process sees, later ones as "other").`,
      labelNames: ['pipeline', 'status', 'tenant'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'kiln_run_duration_seconds',
      help: 'Time from submission to the end of runs that left running (succeeded, failed, dead_lettered, cancelled), by that status.',
      labelNames: ['pipeline', 'status'] as const,
      buckets: [...RUN_DURATION_BUCKETS_SECONDS],
      registers,
    }),
    dedupHits: new Counter({
      name: 'kiln_submit_dedup_hits_total',
      help: 'Submissions answered with the run that already held their idempotency key (no new run).',
      labelNames: ['pipeline'] as const,
      registers,
    }),
    publishRequests: new Counter({
      name: 'kiln_publish_requests_total',
      help: `Publications requested by committed stages, by render profile (the first ${MAX_PROFILE_LABELS} profiles, later ones as "other"); refusals are included (see kiln_duplicate_publish_prevented_total).`,
      labelNames: ['pipeline', 'profile'] as const,
      registers,
    }),
    publishPrevented: new Counter({
      name: 'kiln_duplicate_publish_prevented_total',
      help: 'Publications refused by compare-and-set because a same-or-newer one was already in place.',
      labelNames: ['pipeline'] as const,
      registers,
    }),
    artifactFailures: new Counter({
      name: 'kiln_artifact_commit_failures_total',
      help: 'Artifact writes (temp file, fsync, rename) that failed; oversized or invalid writes the store refused are not counted.',
      registers,
    }),
    orphanedTemps: new Counter({
      name: 'kiln_orphaned_temps_collected_total',
      help: 'Temp files left by crashed writers that the reaper removed after the grace period.',
      registers,
    }),
    cacheRequests: new Counter({
      name: 'kiln_cache_requests_total',
      help: "Single-flight cache lookups by result: hit, miss (this caller built), stale (served while revalidating), negative (cached permanent failure), wait (got another caller's build).",
      labelNames: ['cache', 'result'] as const,
      registers,
    }),
    cacheBuilds: new Counter({
      name: 'kiln_cache_builds_total',
      help: 'Cache builds started (a caller took the builder lease), revalidations included.',
      labelNames: ['cache'] as const,
      registers,
    }),
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
