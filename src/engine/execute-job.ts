/**
 * Runs one claimed job to its commit: the handler under a timeout and an abort signal, then ONE
 * commit item recording the outcome, fenced by the lease and group-committed with the other jobs
 * that finish in the same tick. A handler that ignores its signal is abandoned: the executor stops waiting for it at once.
 * A stage with a `lock` policy takes its lock first (or waits for it, see stage-lock.ts) and
 * releases it after the commit; its completion's publications are fenced by the lock.
 */
import { context } from '@opentelemetry/api';
import { WAKE_REASON } from '../core/clock.ts';
import { LeaseLostError } from '../core/errors.ts';
import { LazyChildLogger, type Logger } from '../core/logger.ts';
import type { Job, JsonValue } from '../core/model.ts';
import type { StageOutcome } from '../core/observer.ts';
import type { StageContext } from '../core/pipeline/define-pipeline.ts';
import { classifyError, decideFailure, decideRollbackFailure } from '../core/policy/retry.ts';
import type { ClaimedJob, CommitItem, CommitResult, FailureDecision, LeaseRef } from '../core/ports/jobs.ts';
import type { PublicationRequest } from '../core/ports/publications.ts';
import type { ArtifactStore } from '../core/ports/artifact-store.ts';
import type { CommitBatcher } from './commit-batcher.ts';
import { crashPlanned, crashPoint } from './crash-points.ts';
import { StageAbortError } from './abort-reason.ts';
import { endAttemptSpan, startAttemptSpan, type AttemptEnd } from './attempt-span.ts';
import type { HeldJob, LeaseKeeper } from './lease-keeper.ts';
import { invokeHandler } from './invoke-handler.ts';
import { releaseStageLock, takeStageLock, type TakenLock } from './stage-lock.ts';
import type { PlannedLock, PlannedStage } from './stage-plan.ts';
import type { ThreadPool } from './thread-pool.ts';
import { tracingEnabled, withSpan } from './tracing.ts';
import type { WorkerDeps } from './worker-deps.ts';


/**
 * A commit's outcome at its level: a run cancelled or superseded meanwhile is an expected end
 * (an operator's or a newer version's doing), logged at info; anything else (a lost lease, a
 * failed attempt) is a warning.
 */
function logRefusal(logger: Logger, outcome: CommitResult['outcome'], fields: Record<string, unknown>, msg: string): void {
  if (outcome === 'cancelled') logger.info(fields, msg);
  else logger.warn(fields, msg);
}
/** What the executor needs: the engine's parts plus its worker's lease keeper, pool and batcher. */
export interface ExecutorDeps extends WorkerDeps {
  /** The worker's id: the owner of the locks it takes. */
  workerId: string;
  leases: LeaseKeeper;
  threads: ThreadPool;
  commits: CommitBatcher;
  /** See `WorkerOptions.beforeCommit`. */
  beforeCommit?: ((job: Job) => void) | undefined;
}

type Settled = { kind: 'ok'; output: JsonValue; publish: PublicationRequest[] } | { kind: 'error'; error: unknown } | { kind: 'aborted'; reason: StageAbortError };

const OUTCOME_BY_DECISION: Record<FailureDecision['action'], StageOutcome> = {
  retry: 'retried',
  park: 'parked',
  dead_letter: 'dead_lettered',
  fail: 'failed',
};

/** Normalises a handler's return value to JSON (undefined -> null), as a JSON round trip would. */
function toJson(value: unknown): JsonValue {
  if (value === undefined || value === null) return null;
  // The common no-op and scalar outputs skip the round trip: NaN and ±Infinity become null and
  // -0 becomes 0, as in JSON.
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : null;
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

/** `artifacts` whose writes pass the crash point `after-artifact-write` once stored (only under a crash plan). */
function withWriteCrashPoint(artifacts: ArtifactStore): ArtifactStore {
  // The other methods through the prototype, whatever kind of object `artifacts` is.
  const wrapped = Object.create(artifacts) as ArtifactStore;
  wrapped.put = async (data, options) => {
    const ref = await artifacts.put(data, options);
    crashPoint('after-artifact-write');
    return ref;
  };
  return wrapped;
}

/**
 * Executes a claimed job and commits its outcome, inside the attempt's span. `held` is the job's
 * lease, held (and renewed) since the claim; the executor releases it when the handler is done,
 * and then calls `handlerDone` so the worker can start its next job while this one's commit is in
 * flight. Never throws.
 */
export async function executeJob(deps: ExecutorDeps, claimed: ClaimedJob, held: HeldJob, handlerDone: () => void): Promise<void> {
  held.onRelease = handlerDone;
  if (!tracingEnabled()) {
    try {
      await execute(deps, claimed, held, claimed.job.traceId);
    } finally {
      deps.leases.release(held);
    }
    return;
  }
  const attempt = startAttemptSpan(claimed, deps.ids);
  let end: AttemptEnd = { outcome: 'handed_back' };
  try {
    end = await context.with(attempt.context, () => execute(deps, claimed, held, attempt.traceId));
  } finally {
    deps.leases.release(held);
    endAttemptSpan(attempt.span, end);
  }
}

async function execute(deps: ExecutorDeps, claimed: ClaimedJob, held: HeldJob, traceId: string | null): Promise<AttemptEnd> {
  const { job } = claimed;
  const stage = deps.plan.byQueue(job.queue);
  const { lease } = held;
  // Made only if a line is logged at an enabled level (the happy path logs at debug).
  const logger: Logger = new LazyChildLogger(deps.logger, {
    pipeline: job.pipeline,
    run_id: job.runId,
    stage: job.stage,
    job_id: job.id,
    attempt: job.attempt,
    trace_id: traceId,
    kind: job.kind,
  });
  if (!stage) {
    // Claimed from a queue this worker serves, so this only happens if a definition was removed.
    logger.error('no stage definition for queue; handing the job back');
    await deps.store.jobs.release([lease]);
    return { outcome: 'handed_back' };
  }
  try {
    if (claimed.exhausted) return await exhausted(deps, stage, claimed, held, logger);
    if (claimed.ledgerOutput !== undefined) {
      const item = { type: 'complete', lease, output: claimed.ledgerOutput, durationMs: 0, next: nextSpec(deps, stage, claimed) } as const;
      const result = await commit(deps, item, leaseDeadline(held, stage));
      if (result.outcome === 'committed') deps.observer.idempotentSkip(job.pipeline, job.stage);
      return { outcome: report(deps, stage, claimed, result, 'succeeded', 0) };
    }
    if (stage.lock !== null) return await runLocked(deps, { ...stage, lock: stage.lock }, claimed, held, logger);
    return (await runAndCommit(deps, stage, claimed, held, logger, null)).end;
  } catch (err) {
    // A commit that failed in the store (e.g. STORE_UNAVAILABLE): the lease will expire and the
    // job be redelivered, so nothing is lost; log and move on.
    logger.error({ err }, 'commit failed; the job will be redelivered after its lease expires');
    const { retryAfterMs: _ignored, ...error } = classifyError(err);
    return { outcome: 'commit_failed', error };
  }
}

/** Commits one item through the batcher, as the attempt's `kiln.commit` span. */
function commit(deps: ExecutorDeps, item: CommitItem, retryUntil: number): Promise<CommitResult> {
  // The hot path: no SDK, no span, not even a wrapper.
  if (!tracingEnabled()) return deps.commits.commit(item, retryUntil);
  return withSpan(
    'kiln.commit',
    async (span) => {
      const result = await deps.commits.commit(item, retryUntil);
      if (span.isRecording()) span.setAttribute('kiln.commit.outcome', result.outcome);
      return result;
    },
    { attributes: () => ({ 'kiln.commit.type': item.type }) },
  );
}

/**
 * The job kept losing its lease (it crashes workers): dead-letter it without running it again.
 * Its class is `transient`, not `permanent`: the job itself may be fine (a replay after fixing
 * the workers may succeed), so the run is dead-lettered, not failed.
 */
async function exhausted(deps: ExecutorDeps, stage: PlannedStage, claimed: ClaimedJob, held: HeldJob, logger: Logger): Promise<AttemptEnd> {
  const error = { class: 'transient' as const, code: 'LEASE_EXPIRED', message: `lease expired on all ${claimed.job.maxAttempts} attempts` };
  // A compensation is never dead-lettered: it parks its run (see decideRollbackFailure).
  const decision: FailureDecision = claimed.job.kind === 'rollback' ? { action: 'park' } : { action: 'dead_letter', rollback: rollbackSpec(deps, stage, claimed) };
  logger.warn({ error, decision }, 'attempts exhausted by lease expiry');
  const result = await commit(deps, { type: 'fail', lease: held.lease, error, durationMs: 0, decision }, leaseDeadline(held, stage));
  return { outcome: report(deps, stage, claimed, result, OUTCOME_BY_DECISION[decision.action], 0, error.class), error };
}

/**
 * Takes the stage's lock, then runs and commits as any job, then lets go of the lock; a job that
 * must wait for the lock was handed back by `takeStageLock`, and a key the run cannot fill fails
 * the attempt (permanent).
 */
async function runLocked(deps: ExecutorDeps, stage: PlannedStage & { lock: PlannedLock }, claimed: ClaimedJob, held: HeldJob, logger: Logger): Promise<AttemptEnd> {
  // A job claimed ahead that lost its lease (or its run) meanwhile never runs: no lock needed.
  if (held.abort.aborted) return (await runAndCommit(deps, stage, claimed, held, logger, null)).end;
  const taken = await takeStageLock(deps, stage, claimed, held, logger);
  if (taken.status === 'handed_back') return { outcome: 'handed_back' };
  if (taken.status === 'unresolved') {
    deps.leases.release(held);
    return commitSettled(deps, stage, claimed, { lease: held.lease, retryUntil: leaseDeadline(held, stage) }, logger, { kind: 'error', error: taken.error }, 0, null);
  }
  let handlerDone: Promise<unknown> = Promise.resolve();
  try {
    const ran = await runAndCommit(deps, stage, claimed, held, logger.child({ lock: taken.lock.key, lock_fence: taken.lock.fence }), taken.lock);
    handlerDone = ran.handlerDone;
    return ran.end;
  } finally {
    // An aborted handler usually stops at once; one that ignores its abort (abandoned) may still
    // be running, so its lock is left to expire after its TTL rather than handed on at once.
    if (await settlesWithin(deps, handlerDone, ABANDONED_HANDLER_GRACE_MS)) await releaseStageLock(deps, held, taken.lock, logger);
    else logger.warn({ lock: taken.lock.key }, 'handler abandoned under its lock; the lock expires after its TTL');
  }
}

/** How long a handler aborted under a lock may take to stop before it counts as abandoned. */
const ABANDONED_HANDLER_GRACE_MS = 1_000;

/** True when `promise` settles within `ms` (on the engine's clock). */
async function settlesWithin(deps: ExecutorDeps, promise: Promise<unknown>, ms: number): Promise<boolean> {
  const timeUp = new AbortController();
  const settled = promise.then(
    () => true,
    () => true,
  );
  const result = await Promise.race([settled, deps.clock.sleep(ms, timeUp.signal).then(() => false)]);
  timeUp.abort(WAKE_REASON);
  return result;
}

/*
 * The handler's callbacks, each returned by a function: tsx (which runs kiln) keeps function
 * names by wrapping every closure defined in a named position (`heartbeat: async () => ...`) in
 * a __name() call, a cost this path would pay three times per job.
 */
function heartbeatOf(deps: ExecutorDeps, held: HeldJob): StageContext['heartbeat'] {
  return async () => {
    const status = await deps.leases.renewNow(held);
    if (status !== 'renewed') throw new LeaseLostError(held.lease.jobId);
  };
}

function progressOf(deps: ExecutorDeps, held: HeldJob): StageContext['progress'] {
  return (marker) => deps.leases.progress(held, marker);
}

function publisherOf(publish: PublicationRequest[]): StageContext['publish'] {
  return (publication) => void publish.push({ ...publication });
}

/**
 * Runs the handler and commits its outcome. `handlerDone` settles when the handler has (at once
 * when it never started; later, or never, when it was abandoned).
 */
async function runAndCommit(
  deps: ExecutorDeps,
  stage: PlannedStage,
  claimed: ClaimedJob,
  held: HeldJob,
  logger: Logger,
  lock: TakenLock | null,
): Promise<{ handlerDone: Promise<unknown>; end: AttemptEnd }> {
  const { job } = claimed;
  const { abort, lease } = held;
  const cancelTimeout = deps.clock.setTimer(
    () => abort.abort(new StageAbortError('timeout', `stage ${job.stage} timed out after ${stage.policy.timeoutMs} ms`)),
    stage.policy.timeoutMs,
  );
  const startedAt = deps.clock.now();
  const publish: PublicationRequest[] = [];
  const ctx: StageContext = {
    run: claimed.run,
    job,
    stage: job.stage,
    attempt: job.attempt,
    input: claimed.run.input,
    outputs: claimed.outputs,
    get signal() {
      return abort.signal;
    },
    heartbeat: heartbeatOf(deps, held),
    progress: progressOf(deps, held),
    lock: lock === null ? null : { key: lock.key, fence: lock.fence },
    artifacts: crashPlanned ? withWriteCrashPoint(deps.artifacts) : deps.artifacts,
    cache: deps.cache,
    settings: deps.settings.get(job.pipeline) ?? null,
    publish: publisherOf(publish),
    logger,
  };
  let settled: Settled;
  let handlerSettled = false;
  // A job claimed ahead may have lost its lease (or its run) while it waited: do not start it.
  const started = !abort.aborted;
  const handler = (started ? invokeHandler(deps.threads, stage, ctx) : new Promise<never>(() => {})).then(
    (output): Settled => {
      handlerSettled = true;
      // An output JSON cannot hold (a cycle, a BigInt) fails the attempt like a throw would.
      try {
        return { kind: 'ok', output: toJson(output), publish };
      } catch (error) {
        return { kind: 'error', error };
      }
    },
    (error: unknown): Settled => {
      handlerSettled = true;
      return { kind: 'error', error };
    },
  );
  // The handler has started and not finished (its first await is pending): a crash point.
  if (started) crashPoint(job.kind === 'rollback' ? 'mid-rollback' : 'mid-handler');
  try {
    // The handler's end, or the abort if it comes first (a handler that ignores it is abandoned).
    settled = await new Promise<Settled>((resolve) => {
      void handler.then(resolve);
      abort.onAbort((reason) => resolve({ kind: 'aborted', reason }));
    });
  } finally {
    cancelTimeout();
    // Heartbeats stop with the handler; the commit below is fenced by the lease as it stands.
    deps.leases.release(held);
  }
  const durationMs = deps.clock.now() - startedAt;
  // The timeout fired, whether the handler then rejected with its reason or ignored it.
  if (settled.kind !== 'ok' && abort.reason?.abortCause === 'timeout') {
    deps.observer.stageTimedOut(job.pipeline, job.stage);
    if (settled.kind === 'aborted' && !handlerSettled) {
      deps.observer.handlerAbandoned(job.pipeline, job.stage);
      logger.warn({ timeoutMs: stage.policy.timeoutMs }, 'handler ignored its timeout; abandoned');
    }
  }
  const end = await commitSettled(deps, stage, claimed, { lease, retryUntil: leaseDeadline(held, stage) }, logger, settled, durationMs, lock);
  return { handlerDone: started ? handler : Promise.resolve(), end };
}

/**
 * The abort cause when nothing is to be committed (someone else owns the job now, or stop() hands
 * it back), else null: a timeout or a lost lock is a failed attempt, committed as such.
 */
function discardingCause(settled: Settled): 'lease_lost' | 'cancelled' | 'shutdown' | null {
  if (settled.kind !== 'aborted') return null;
  const cause = settled.reason.abortCause;
  return cause === 'lease_lost' || cause === 'cancelled' || cause === 'shutdown' ? cause : null;
}

async function commitSettled(
  deps: ExecutorDeps,
  stage: PlannedStage,
  claimed: ClaimedJob,
  { lease, retryUntil }: { lease: LeaseRef; retryUntil: number },
  logger: Logger,
  settled: Settled,
  durationMs: number,
  lock: TakenLock | null,
): Promise<AttemptEnd> {
  const pipeline = stage.pipeline.name;
  if (settled.kind === 'ok') {
    const next = nextSpec(deps, stage, claimed);
    // Under a lock, the completion's publications are fenced by the lock (see CompleteStageRequest.lock).
    // Two literals, not a spread: this is the hot path of every stage without a lock.
    const item: CommitItem =
      lock === null
        ? { type: 'complete', lease, output: settled.output, durationMs, next }
        : { type: 'complete', lease, output: settled.output, durationMs, next, lock: { key: lock.key, fence: lock.fence } };
    deps.beforeCommit?.(claimed.job);
    const result = await commit(deps, settled.publish.length > 0 ? { ...item, publish: settled.publish } : item, retryUntil);
    if (result.outcome === 'committed') crashPoint('after-commit');
    const outcome = report(deps, stage, claimed, result, 'succeeded', durationMs);
    if (result.outcome === 'committed') {
      if (settled.publish.length > 0) deps.observer.publicationsRequested(pipeline, settled.publish.map((p) => p.profile));
      if (result.publicationsRefused) deps.observer.duplicatePublishPrevented(pipeline, result.publicationsRefused);
      logger.debug({ durationMs }, 'stage succeeded');
    } else {
      logRefusal(logger, result.outcome, { durationMs, outcome: result.outcome }, 'commit refused; result discarded');
    }
    return { outcome };
  }
  const discarded = discardingCause(settled);
  if (discarded !== null) {
    // Lease lost, run cancelled or worker shutting down: nothing is committed from here.
    logger.info({ reason: discarded }, 'handler aborted; result discarded');
    if (discarded === 'shutdown') return { outcome: 'handed_back' };
    return { outcome: report(deps, stage, claimed, { outcome: discarded }, 'succeeded', durationMs) };
  }
  const error = classifyError(settled.kind === 'aborted' ? settled.reason : settled.error);
  const failure = { error, attempt: claimed.job.attempt, policy: stage.policy, random: deps.random };
  const decision = claimed.job.kind === 'rollback' ? decideRollbackFailure(failure) : decideFailure({ ...failure, rollback: rollbackSpec(deps, stage, claimed) });
  const { retryAfterMs: _ignored, ...record } = error;
  const result = await commit(deps, { type: 'fail', lease, error: record, durationMs, decision }, retryUntil);
  const outcome = report(deps, stage, claimed, result, OUTCOME_BY_DECISION[decision.action], durationMs, error.class);
  logRefusal(logger, result.outcome, { error: record, decision, outcome: result.outcome }, 'stage attempt failed');
  return { outcome, error: record };
}

/**
 * When the job stops being ours if nothing renews it: one lease after the last renewal. Commit
 * retries stop there (heartbeats stop once the handler is done; a retry after it would be refused).
 */
function leaseDeadline(held: HeldJob, stage: PlannedStage): number {
  return held.lastRenewAt + stage.policy.leaseMs;
}

/** The job to enqueue after this one commits. */
function nextSpec(deps: ExecutorDeps, stage: PlannedStage, claimed: ClaimedJob) {
  if (claimed.job.kind === 'rollback') return deps.plan.rollbackBefore(stage.pipeline.name, stage.index);
  return deps.plan.nextJob(stage.pipeline.name, stage.definition.name);
}

/** The compensation to start if this stage job ends its run (dead-letters or fails it). */
function rollbackSpec(deps: ExecutorDeps, stage: PlannedStage, claimed: ClaimedJob) {
  // Compensations are not compensated: a failing one parks its run (decideRollbackFailure).
  if (claimed.job.kind === 'rollback') return null;
  return deps.plan.rollbackAfterFailureOf(stage.pipeline.name, stage.index);
}

/** Counts the execution and any run status change; returns the execution's outcome. */
function report(
  deps: ExecutorDeps,
  stage: PlannedStage,
  claimed: ClaimedJob,
  result: CommitResult,
  outcomeIfCommitted: StageOutcome,
  durationMs: number,
  errorClass?: 'transient' | 'intervention' | 'permanent',
): StageOutcome {
  const { job, run } = claimed;
  const pipeline = stage.pipeline.name;
  const committed = result.outcome === 'committed';
  const outcome: StageOutcome = committed ? outcomeIfCommitted : result.outcome;
  const now = deps.clock.now();
  // One literal, no spreads: this runs for every job.
  deps.observer.stageExecuted({
    pipeline,
    stage: stage.definition.name,
    outcome,
    durationMs,
    rollback: job.kind === 'rollback',
    attempt: job.attempt,
    // Store time (enqueue) against this host's time: clamped, as hosts may disagree slightly.
    sinceEnqueuedMs: committed ? Math.max(0, now - job.enqueuedAt) : undefined,
    errorClass,
  });
  if (committed && result.runStatus !== 'running') {
    deps.observer.runStatus(pipeline, result.runStatus, run.tenant);
    if (result.runStatus !== 'parked') deps.observer.runFinished(pipeline, result.runStatus, Math.max(0, now - run.createdAt));
    deps.runEnded?.({ runId: job.runId, pipeline, status: result.runStatus });
  }
  return outcome;
}
