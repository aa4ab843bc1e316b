/**
 * Lease-fenced commits: `commit` applies a batch of completions and failures in order inside one
 * BEGIN IMMEDIATE transaction (group commit). Each item checks its own lease first and changes
 * nothing when the lease is refused; otherwise the ledger, stage record, next job, run, job and
 * the completion's publications (compare-and-set, fenced by the lease fence) change together. A
 * completion — the hot path — is five statements (plus one per publication) and writes no run row
 * unless the run starts compensating or ends: the fenced delete returns what the ledger, the next
 * job and the publications need, and one read of the run's status is all a move to the next stage
 * touches of the run (its stage and time are read from the job it enqueues: sql/run-columns.ts).
 */
import type { RunStatus, StageErrorRecord } from '../../../core/model.ts';
import type { CommitItem, CommitResult, CompleteStageRequest, FailStageRequest, JobSpec } from '../../../core/ports/jobs.ts';
import { canTransition } from '../../../core/run/transitions.ts';
import type { SqliteContext } from '../context.ts';
import { applyPublications } from '../publications.ts';
import { toJson, type JobRow, type RunRow } from '../rows.ts';
import { enqueueJob, requireRun, updateRun, type JobOwner, type RunChanges } from '../run-state.ts';
import type { DeletedJobRow } from '../sql/jobs.ts';
import { checkLease, refusalReason, type RefusalReason } from './leases.ts';

/** The refusal a failed lease check turns into. */
function refusal(reason: RefusalReason): CommitResult {
  return { outcome: reason === 'cancelled' ? 'cancelled' : 'lease_lost' };
}

/** The status a run update returned; the run of a held job always exists (foreign key). */
function statusOf(row: { status: RunStatus } | undefined, runId: string): RunStatus {
  if (!row) throw new Error(`run ${runId} of a held job is missing`);
  return row.status;
}

/** Enqueues a compensation and marks its stage's rollback `pending`. */
function enqueueRollback(ctx: SqliteContext, run: JobOwner, spec: JobSpec, now: number): void {
  enqueueJob(ctx, run, spec, now);
  ctx.sql().setRollbackStatus.run('pending', run.id, spec.stage);
}

/** Enqueues `next` or ends the run; returns the run's status afterwards. */
function advanceRun(ctx: SqliteContext, job: DeletedJobRow, next: JobSpec | null, now: number): RunStatus {
  const sql = ctx.sql();
  if (next === null) {
    const status = job.kind === 'stage' ? 'succeeded' : 'failed';
    sql.finishRun.run({ id: job.run_id, status, now });
    return status;
  }
  // The job carries its run's pipeline, tenant and trace id: no need to read the run.
  const owner: JobOwner = { id: job.run_id, pipeline: job.pipeline, tenant: job.tenant, trace_id: job.trace_id };
  if (next.kind === 'rollback') {
    enqueueRollback(ctx, owner, next, now);
    return statusOf(sql.touchRun.get({ id: job.run_id, now }), job.run_id);
  }
  // The run row is not written: its stage and last change are read from this job (run-columns.ts).
  enqueueJob(ctx, owner, next, now);
  return statusOf(sql.selectRunStatus.get(job.run_id), job.run_id);
}

/** Records the job's success, enqueues `next` or ends the run, and deletes the job. */
function completeStage(ctx: SqliteContext, request: CompleteStageRequest, now: number): CommitResult {
  const sql = ctx.sql();
  // Fence check and delete in one statement, and first: a refused lease changes nothing, and the
  // next job can never be absorbed by this one's live key.
  const job = sql.deleteLeasedJob.get(request.lease.jobId, request.lease.token, now);
  if (!job) return refusal(refusalReason(ctx, request.lease.jobId));
  const output = toJson(request.output);

  // The first completion of a key wins; a duplicate keeps the recorded outcome.
  sql.insertLedger.run(job.run_id, job.idempotency_key, job.run_id, job.stage, job.kind, output, now);
  if (job.kind === 'stage') {
    sql.succeedStage.run(output, now, request.durationMs, job.attempt, job.started_at, job.run_id, job.stage);
  } else {
    sql.setRollbackStatus.run('succeeded', job.run_id, job.stage);
  }
  const runStatus = advanceRun(ctx, job, request.next, now);
  // Only a held lease gets here: a refused item publishes nothing.
  if (request.publish === undefined || request.publish.length === 0) return { outcome: 'committed', runStatus };
  return { outcome: 'committed', runStatus, publicationsRefused: applyPublications(ctx, request.publish, job.fence, now, request.lock) };
}

/** What a failed attempt does to the job, its stage record and its run. */
interface FailureEffect {
  jobState: 'ready' | 'parked' | 'dead';
  availableAt: number;
  stageStatus: 'failed' | 'dead_lettered';
  run: RunChanges | null;
}

/**
 * A permanent failure: the run ends `failed`, or only takes the error while the compensation
 * given runs (the last compensation ends it `failed`).
 */
function finalFailureEffect(job: JobRow, rollback: JobSpec | null, error: string, now: number): FailureEffect {
  const run: RunChanges = rollback === null ? { status: 'failed', error, current_stage: null, finished_at: now } : { error };
  return { jobState: 'dead', availableAt: job.available_at, stageStatus: 'failed', run };
}

function failureEffect(request: FailStageRequest, job: JobRow, run: RunRow, error: string, now: number): FailureEffect {
  const decision = request.decision;
  if (decision.action === 'retry') {
    return { jobState: 'ready', availableAt: now + Math.max(0, decision.delayMs), stageStatus: 'failed', run: null };
  }
  if (decision.action === 'park') {
    // The run parks where the transition table allows it (running, and dead_lettered while a
    // compensation runs); otherwise the job alone waits, visible as parked.
    // Parked waits for an operator: not finished (a dead-lettered run's finished_at goes).
    const park = canTransition(run.status, 'parked') ? { status: 'parked' as const, finished_at: null } : null;
    return { jobState: 'parked', availableAt: job.available_at, stageStatus: 'failed', run: park };
  }
  if (decision.action === 'fail') return finalFailureEffect(job, decision.rollback, error, now);
  return {
    jobState: 'dead',
    availableAt: job.available_at,
    stageStatus: 'dead_lettered',
    // Dead-lettered is where the run stops until a replay (which clears finished_at again).
    run: { status: 'dead_lettered', error, finished_at: now },
  };
}

/** Records a failed attempt and applies the engine's decision. */
function failStage(ctx: SqliteContext, request: FailStageRequest, now: number): CommitResult {
  const check = checkLease(ctx, request.lease, now);
  if (!check.ok) return refusal(check.reason);
  const { job } = check;
  const sql = ctx.sql();
  const run = requireRun(ctx, job.run_id);
  // Only the record's own fields: an Error-like object passed in must not leak extra keys.
  const { class: errorClass, code, message } = request.error;
  const error = JSON.stringify({ class: errorClass, code, message } satisfies StageErrorRecord);
  const effect = failureEffect(request, job, run, error, now);
  sql.insertFailedAttempt.run({
    run_id: run.id,
    job_id: job.id,
    stage: job.stage,
    kind: job.kind,
    queue: job.queue,
    attempt: job.attempt,
    worker: job.lease_owner,
    action: request.decision.action,
    error,
    duration_ms: request.durationMs,
    now,
  });

  // The attempt ran, so any lock wait before it is over.
  sql.unleaseJob.run({ id: job.id, state: effect.jobState, available_at: effect.availableAt, attempt: job.attempt, last_error: error, lock_wait_since: null });
  if (job.kind === 'stage') {
    sql.failStage.run({
      run_id: run.id,
      stage: job.stage,
      status: effect.stageStatus,
      error,
      duration_ms: request.durationMs,
      finished_at: effect.jobState === 'dead' ? now : null,
      // A dead job's claims count on the record now; a live one's are added on read (0015).
      attempts: effect.jobState === 'dead' ? job.attempt : 0,
      started_at: job.started_at,
    });
  } else if (effect.jobState === 'dead') {
    sql.setRollbackStatus.run('dead_lettered', run.id, job.stage);
  }
  if (effect.jobState === 'ready' && effect.availableAt <= now) ctx.wake(job.queue);

  // A retry leaves the run's status alone, so runs_status is not rewritten for it.
  const status = effect.run === null ? statusOf(sql.touchRun.get({ id: run.id, now }), run.id) : updateRun(ctx, run, effect.run, now).status;
  const { decision } = request;
  if ((decision.action === 'dead_letter' || decision.action === 'fail') && decision.rollback !== null) {
    enqueueRollback(ctx, run, decision.rollback, now);
  }
  return { outcome: 'committed', runStatus: status };
}

/**
 * Applies the items in order at one instant inside the caller's transaction, each fenced by its
 * own lease: a refused item writes nothing, so later items see what they would see alone.
 */
export function commit(ctx: SqliteContext, items: readonly CommitItem[]): CommitResult[] {
  const now = ctx.clock.now();
  return items.map((item) => (item.type === 'complete' ? completeStage(ctx, item, now) : failStage(ctx, item, now)));
}
