/**
 * The `operator` sub-port of the SQLite store: cancel, resume, replay, pause and drain. Each is
 * one BEGIN IMMEDIATE transaction; run moves are checked against the transition table of
 * `core/run/transitions.ts`.
 */
import { ConflictError, ErrorClass, NotFoundError } from '../../core/errors.ts';
import type { Job, Run } from '../../core/model.ts';
import type { OperatorPort } from '../../core/ports/operator.ts';
import { assertReplayable, assertTransition } from '../../core/run/transitions.ts';
import type { SqliteContext } from './context.ts';
import { jobFromRow, runFromRow, type JobRow, type RunRow } from './rows.ts';
import { endRun, requireRun, updateRun, type RunChanges } from './run-state.ts';

/**
 * Makes a parked or dead job ready now as a fresh start (`attempt = 0`), its stage record
 * `pending`, and its run `running` at the job's stage. Returns the updated run row.
 */
function restartJob(ctx: SqliteContext, job: JobRow, run: RunRow, now: number, extra: RunChanges = {}): RunRow {
  const sql = ctx.sql();
  sql.unleaseJob.run({ id: job.id, state: 'ready', available_at: now, attempt: 0, last_error: job.last_error, lock_wait_since: null });
  // A parked job's claims were added on read; with its attempt reset the record counts them.
  if (job.kind === 'stage') sql.resetStage.run(job.state === 'dead' ? 0 : job.attempt, job.started_at, run.id, job.stage);
  ctx.wake(job.queue);
  return updateRun(ctx, run, { status: 'running', current_stage: job.stage, ...extra }, now);
}

/** Cancels `row` (already checked to exist) with `reason`; returns the ended row. */
function cancel(ctx: SqliteContext, row: RunRow, reason: string, now: number): RunRow {
  assertTransition(row.id, row.status, 'cancelled');
  return endRun(ctx, row, 'cancelled', { class: ErrorClass.permanent, code: 'CANCELLED', message: reason }, now);
}

/** Cancels a run that has not ended: its jobs deleted, unfinished stages `skipped`. */
function cancelRun(ctx: SqliteContext, runId: string, reason: string): Run {
  return runFromRow(cancel(ctx, requireRun(ctx, runId), reason, ctx.clock.now()));
}

/** Parked run -> running; its parked job -> ready now with `attempt = 0`, its stage `pending`. */
function resumeRun(ctx: SqliteContext, runId: string): Run {
  const row = requireRun(ctx, runId);
  const sql = ctx.sql();
  const job = sql.selectParkedJobsOfRun.get(runId);
  // `running -> running` is a legal internal move, so "only parked runs resume" is checked here.
  if (row.status !== 'parked' || !job) {
    throw new ConflictError('INVALID_TRANSITION', `run ${row.id} is ${row.status} and cannot be resumed`, {
      details: { runId: row.id, from: row.status, to: 'running' },
    });
  }
  assertTransition(row.id, row.status, 'running');
  return runFromRow(restartJob(ctx, job, row, ctx.clock.now()));
}

/**
 * Dead job of a dead-lettered run -> ready now with `attempt = 0`; its stage record `pending`;
 * its run `running`. A run that failed permanently or was compensated is not replayed.
 */
function replayJob(ctx: SqliteContext, jobId: string): Job {
  const sql = ctx.sql();
  const job = sql.selectJob.get(jobId);
  if (!job) throw new NotFoundError('job', jobId);
  if (job.state !== 'dead') {
    throw new ConflictError('INVALID_TRANSITION', `job ${jobId} is ${job.state}, only a dead job can be replayed`, {
      details: { jobId, state: job.state },
    });
  }
  const run = requireRun(ctx, job.run_id);
  if (sql.selectAnyRollback.get(run.id)) {
    throw new ConflictError('RUN_COMPENSATED', `run ${run.id} was rolled back; submit a new run instead of replaying`, {
      details: { runId: run.id, jobId },
    });
  }
  assertReplayable(run.id, run.status, jobId);
  // A live job with the same key would make this one a duplicate; the unique index forbids it.
  if (sql.selectOtherLiveJobWithKey.get(job.run_id, job.idempotency_key, job.id)) {
    throw new ConflictError('INVALID_TRANSITION', `job ${jobId} has a live duplicate; nothing to replay`, {
      details: { jobId, idempotencyKey: job.idempotency_key },
    });
  }
  const now = ctx.clock.now();
  restartJob(ctx, job, run, now, { error: null, finished_at: null });
  const replayed = sql.selectJob.get(jobId);
  if (!replayed) throw new NotFoundError('job', jobId);
  return jobFromRow(replayed);
}

/** Pauses (no claims) or resumes a queue; the queue need not exist before. */
function setQueuePaused(ctx: SqliteContext, queue: string, paused: boolean): void {
  ctx.sql().upsertQueue.run(queue, paused ? 1 : 0, ctx.clock.now());
  if (!paused) ctx.wake(queue);
}

/**
 * Removes every ready job of the queue (leased ones finish) and cancels their runs with
 * reason `queue drained`. Returns how many jobs of the queue were removed.
 */
function drainQueue(ctx: SqliteContext, queue: string): number {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  const ready = sql.selectReadyJobsOfQueue.all(queue);
  const cancelled = new Set<string>();
  for (const job of ready) {
    if (cancelled.has(job.run_id)) continue;
    cancelled.add(job.run_id);
    const run = requireRun(ctx, job.run_id);
    // Every run with a live job has not ended, so the move is always legal; endRun deletes the
    // run's other jobs too.
    cancel(ctx, run, 'queue drained', now);
  }
  return ready.length;
}

/** The operator actions over `ctx`. */
export function createOperatorPort(ctx: SqliteContext): OperatorPort {
  return {
    cancelRun: ctx.write((runId, reason) => cancelRun(ctx, runId, reason)),
    resumeRun: ctx.write((runId) => resumeRun(ctx, runId)),
    replayJob: ctx.write((jobId) => replayJob(ctx, jobId)),
    setQueuePaused: ctx.write((queue, paused) => setQueuePaused(ctx, queue, paused)),
    drainQueue: ctx.write((queue) => drainQueue(ctx, queue)),
  };
}
