/**
 * Lease-fenced commits: `completeStage` and `failStage`. Each is one BEGIN IMMEDIATE transaction
 * that checks the lease first (token, state `leased`, not expired) and changes nothing when the
 * lease is refused; otherwise the ledger, stage record, next job, run and job change together.
 */
import type { StageErrorRecord } from '../../core/model.ts';
import type { CommitResult, CompleteStageRequest, FailStageRequest, JobSpec } from '../../core/ports.ts';
import { canTransition } from '../../core/run/transitions.ts';
import { checkLease, type LeaseCheck } from './check-lease.ts';
import type { SqliteContext } from './context.ts';
import { enqueueJob } from './enqueue-job.ts';
import { toJson, type JobRow, type RunRow } from './rows.ts';
import { updateRun } from './run-state.ts';

/** The refusal a failed lease check turns into. */
function refusal(check: Extract<LeaseCheck, { ok: false }>): CommitResult {
  return { outcome: check.reason === 'cancelled' ? 'cancelled' : 'lease_lost' };
}

/** Enqueues a compensation and marks its stage's rollback `pending`. */
function enqueueRollback(ctx: SqliteContext, run: RunRow, spec: JobSpec, now: number): void {
  enqueueJob(ctx, run, spec, now);
  ctx.sql().setRollbackStatus.run('pending', run.id, spec.stage);
}

/** Enqueues `next` or ends the run; returns the run as it now is. */
function advanceRun(ctx: SqliteContext, job: JobRow, run: RunRow, next: JobSpec | null, now: number): RunRow {
  if (next === null) {
    const status = job.kind === 'stage' ? 'succeeded' : 'failed';
    return updateRun(ctx, run, { status, current_stage: null, finished_at: now }, now);
  }
  if (next.kind === 'rollback') {
    enqueueRollback(ctx, run, next, now);
    return updateRun(ctx, run, {}, now);
  }
  enqueueJob(ctx, run, next, now);
  return updateRun(ctx, run, { current_stage: next.stage }, now);
}

/** Records the job's success, enqueues `next` or ends the run, and deletes the job. */
export function completeStage(ctx: SqliteContext, request: CompleteStageRequest): CommitResult {
  const now = ctx.clock.now();
  const check = checkLease(ctx, request.lease, now);
  if (!check.ok) return refusal(check);
  const { job, run } = check;
  const sql = ctx.sql();
  const output = toJson(request.output);

  // The first completion of a key wins; a duplicate keeps the recorded outcome.
  sql.insertLedger.run(job.idempotency_key, run.id, job.stage, job.kind, output, now);
  if (job.kind === 'stage') {
    sql.succeedStage.run({ run_id: run.id, stage: job.stage, output, now, duration_ms: request.durationMs });
  } else {
    sql.setRollbackStatus.run('succeeded', run.id, job.stage);
  }
  // Delete before enqueuing: the next job must not be absorbed by this one's live key.
  sql.deleteJob.run(job.id);
  const after = advanceRun(ctx, job, run, request.next, now);
  return { outcome: 'committed', runStatus: after.status };
}

/** What a failed attempt does to the job, its stage record and its run. */
interface FailureEffect {
  jobState: 'ready' | 'parked' | 'dead';
  availableAt: number;
  stageStatus: 'failed' | 'dead_lettered';
  run: Partial<Pick<RunRow, 'status' | 'error'>>;
}

function failureEffect(request: FailStageRequest, job: JobRow, run: RunRow, error: string, now: number): FailureEffect {
  const decision = request.decision;
  if (decision.action === 'retry') {
    return { jobState: 'ready', availableAt: now + Math.max(0, decision.delayMs), stageStatus: 'failed', run: {} };
  }
  if (decision.action === 'park') {
    // A compensation of a dead-lettered run cannot park the run (not a legal move): the job
    // alone waits, visible as parked.
    const park = canTransition(run.status, 'parked') ? { status: 'parked' as const } : {};
    return { jobState: 'parked', availableAt: job.available_at, stageStatus: 'failed', run: park };
  }
  return {
    jobState: 'dead',
    availableAt: job.available_at,
    stageStatus: 'dead_lettered',
    run: { status: 'dead_lettered', error },
  };
}

/** Records a failed attempt and applies the engine's decision. */
export function failStage(ctx: SqliteContext, request: FailStageRequest): CommitResult {
  const now = ctx.clock.now();
  const check = checkLease(ctx, request.lease, now);
  if (!check.ok) return refusal(check);
  const { job, run } = check;
  const sql = ctx.sql();
  // Only the record's own fields: an Error-like object passed in must not leak extra keys.
  const { class: errorClass, code, message } = request.error;
  const error = JSON.stringify({ class: errorClass, code, message } satisfies StageErrorRecord);
  const effect = failureEffect(request, job, run, error, now);

  sql.unleaseJob.run({ id: job.id, state: effect.jobState, available_at: effect.availableAt, attempt: job.attempt, last_error: error });
  if (job.kind === 'stage') {
    sql.failStage.run({
      run_id: run.id,
      stage: job.stage,
      status: effect.stageStatus,
      error,
      duration_ms: request.durationMs,
      finished_at: effect.stageStatus === 'dead_lettered' ? now : null,
    });
  } else if (effect.jobState === 'dead') {
    sql.setRollbackStatus.run('dead_lettered', run.id, job.stage);
  }
  if (effect.jobState === 'ready' && effect.availableAt <= now) ctx.wake(job.queue);

  const after = updateRun(ctx, run, effect.run, now);
  if (request.decision.action === 'dead_letter' && request.decision.rollback !== null) {
    enqueueRollback(ctx, after, request.decision.rollback, now);
  }
  return { outcome: 'committed', runStatus: after.status };
}
