/**
 * Lease-fenced commits for the memory store: `commit` applies a batch of completions and
 * failures in order, each checking its own lease first and changing nothing when refused.
 */
import type { FailedAttempt, Job, Run, StageErrorRecord, StageRecord } from '../../../core/model.ts';
import { JobKind, JobState, RollbackStatus, RunStatus, StageStatus } from '../../../core/model.ts';
import type { CommitItem, CommitResult, CompleteStageRequest, FailStageRequest, FailureDecision, JobSpec } from '../../../core/ports/jobs.ts';
import { canTransition } from '../../../core/run/transitions.ts';
import { applyPublications } from '../publications.ts';
import { copy, ledgerEntry } from '../rows.ts';
import type { LeaseCheck, MemoryState } from '../state.ts';

/** The refusal a failed lease check turns into. */
function refusal(check: Extract<LeaseCheck, { ok: false }>): CommitResult {
  return { outcome: check.reason === 'cancelled' ? 'cancelled' : 'lease_lost' };
}

/** Enqueues a compensation and marks its stage's rollback `pending`. */
function enqueueRollback(state: MemoryState, run: Run, spec: JobSpec, now: number): void {
  state.enqueue(run, spec, now);
  state.stageRecord(run.id, spec.stage).rollbackStatus = RollbackStatus.pending;
}

/**
 * Records the job's success, enqueues `next` or ends the run, deletes the job and applies its
 * publications (see {@link applyPublications}).
 */
function completeStage(state: MemoryState, request: CompleteStageRequest, now: number): CommitResult {
  const check = state.checkLease(request.lease, now);
  if (!check.ok) return refusal(check);
  const { job, run } = check;

  // One copy of the output serves the ledger and the stage record (the state never edits one in place).
  const output = copy(request.output);
  // The first completion of a key wins; a duplicate keeps the recorded outcome.
  if (!state.ledger.has(job.idempotencyKey)) state.ledger.set(job.idempotencyKey, ledgerEntry(job, output, now));
  const record = state.stageRecord(run.id, job.stage);
  if (job.kind === JobKind.stage) {
    record.status = StageStatus.succeeded;
    record.output = output;
    record.error = null;
    record.leaseOwner = null;
    record.leaseUntil = null;
    record.finishedAt = now;
    record.durationMs = request.durationMs;
  } else {
    record.rollbackStatus = RollbackStatus.succeeded;
  }
  // Delete before enqueuing: the next job must not be absorbed by this one's key.
  state.deleteJob(job.id);

  const next = request.next;
  if (next === null) {
    run.status = job.kind === JobKind.stage ? RunStatus.succeeded : RunStatus.failed;
    run.currentStage = null;
    run.finishedAt = now;
  } else if (next.kind === JobKind.rollback) {
    enqueueRollback(state, run, next, now);
  } else {
    state.enqueue(run, next, now);
    run.currentStage = next.stage;
  }
  run.updatedAt = now;
  // The job's own fence (or its lock's) orders publications: a later holder of the same version wins.
  const refused = applyPublications(state, request.publish ?? [], job.fence ?? 0, now, request.lock);
  return { outcome: 'committed', runStatus: run.status, ...(refused > 0 ? { publicationsRefused: refused } : {}) };
}

/** Job back to ready after the backoff; the stage waits as `failed`. */
function applyRetry(state: MemoryState, job: Job, record: StageRecord, delayMs: number, now: number): void {
  job.state = JobState.ready;
  job.availableAt = now + Math.max(0, delayMs);
  state.jobChanged(job);
  if (job.kind === JobKind.stage) record.status = StageStatus.failed;
  if (delayMs <= 0) state.pendingWakes.add(job.queue);
}

/** Job and run wait for an operator. */
function applyPark(state: MemoryState, job: Job, record: StageRecord, run: Run): void {
  job.state = JobState.parked;
  state.jobChanged(job);
  if (job.kind === JobKind.stage) record.status = StageStatus.failed;
  // The run parks where the transition table allows it (running, and dead_lettered while a
  // compensation runs); otherwise the job alone waits, visible as parked.
  if (canTransition(run.status, RunStatus.parked)) {
    run.status = RunStatus.parked;
    // Parked waits for an operator: not finished (a dead-lettered run's finishedAt goes).
    run.finishedAt = null;
  }
}

/** The job, its stage record and its run as one failed attempt found them. */
interface AttemptFailure {
  job: Job;
  record: StageRecord;
  run: Run;
  error: StageErrorRecord;
}

/**
 * The job dies, kept for inspection (and replay, for a dead letter); its stage record ends with
 * `stageStatus`, or, for a compensation, its rollback is dead-lettered.
 */
function killJob(state: MemoryState, attempt: AttemptFailure, stageStatus: StageStatus, now: number): void {
  const { job, record } = attempt;
  job.state = JobState.dead;
  state.jobChanged(job);
  if (job.kind === JobKind.stage) {
    record.status = stageStatus;
    record.finishedAt = now;
  } else {
    record.rollbackStatus = RollbackStatus.dead_lettered;
  }
}

/** Job dead, stage and run dead-lettered, optional compensation enqueued. */
function applyDeadLetter(state: MemoryState, attempt: AttemptFailure, rollback: JobSpec | null, now: number): void {
  killJob(state, attempt, StageStatus.dead_lettered, now);
  const { run } = attempt;
  run.status = RunStatus.dead_lettered;
  run.error = attempt.error;
  // Dead-lettered is where the run stops until a replay (which clears finishedAt again).
  run.finishedAt = now;
  if (rollback !== null) enqueueRollback(state, run, rollback, now);
}

/**
 * A permanent failure: job dead (kept for inspection), stage record failed for good; the run
 * ends `failed`, or keeps its status while the compensation given runs (the last compensation
 * ends it `failed`).
 */
function applyFail(state: MemoryState, attempt: AttemptFailure, rollback: JobSpec | null, now: number): void {
  killJob(state, attempt, StageStatus.failed, now);
  const { run } = attempt;
  run.error = attempt.error;
  if (rollback !== null) {
    enqueueRollback(state, run, rollback, now);
    return;
  }
  run.status = RunStatus.failed;
  run.currentStage = null;
  run.finishedAt = now;
}

/** Appends the attempt to its run's failure history (before the lease is cleared: it names the worker). */
function recordFailedAttempt(state: MemoryState, job: Job, request: FailStageRequest, error: StageErrorRecord, now: number): void {
  const attempt: FailedAttempt = {
    runId: job.runId,
    jobId: job.id,
    stage: job.stage,
    kind: job.kind,
    queue: job.queue,
    attempt: job.attempt,
    workerId: job.leaseOwner,
    error: { class: error.class, code: error.code, message: error.message },
    action: request.decision.action,
    durationMs: request.durationMs,
    failedAt: now,
  };
  const history = state.failedAttempts.get(job.runId);
  if (history) history.push(attempt);
  else state.failedAttempts.set(job.runId, [attempt]);
}

/** Records a failed attempt and applies the engine's decision. */
function failStage(state: MemoryState, request: FailStageRequest, now: number): CommitResult {
  const check = state.checkLease(request.lease, now);
  if (!check.ok) return refusal(check);
  const { job, run } = check;
  const error: StageErrorRecord = { ...request.error };
  const record = state.stageRecord(run.id, job.stage);

  job.lastError = error;
  // The attempt ran, so any lock wait before it is over.
  job.lockWaitSince = null;
  recordFailedAttempt(state, job, request, error, now);
  state.clearLease(job);
  if (job.kind === JobKind.stage) {
    record.error = error;
    record.durationMs = request.durationMs;
    record.leaseOwner = null;
    record.leaseUntil = null;
  }
  const decision: FailureDecision = request.decision;
  if (decision.action === 'retry') applyRetry(state, job, record, decision.delayMs, now);
  else if (decision.action === 'park') applyPark(state, job, record, run);
  else if (decision.action === 'fail') applyFail(state, { job, record, run, error }, decision.rollback, now);
  else applyDeadLetter(state, { job, record, run, error }, decision.rollback, now);
  run.updatedAt = now;
  return { outcome: 'committed', runStatus: run.status };
}

/**
 * Applies the items in order at one instant (one transaction): each is fenced by its own lease,
 * and a refused item changes nothing, so later items see exactly what they would alone.
 */
export function commit(state: MemoryState, items: readonly CommitItem[]): CommitResult[] {
  const now = state.clock.now();
  return items.map((item) => (item.type === 'complete' ? completeStage(state, item, now) : failStage(state, item, now)));
}
