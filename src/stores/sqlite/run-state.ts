/**
 * Run-level moves the `jobs` and `operator` sub-ports share: reading a run or failing with
 * `NotFoundError`, writing its new state, enqueuing one of its jobs, and ending it early (cancel,
 * supersede, drain) so no job of it survives. All of them run inside the caller's transaction.
 */
import { NotFoundError } from '../../core/errors.ts';
import { jobIdempotencyKey } from '../../core/keys.ts';
import type { RunStatus, StageErrorRecord } from '../../core/model.ts';
import type { JobSpec } from '../../core/ports/jobs.ts';
import type { SqliteContext } from './context.ts';
import { toJsonOrNull, type RunRow } from './rows.ts';

/** The run's row, or `NotFoundError`. */
export function requireRun(ctx: SqliteContext, runId: string): RunRow {
  const row = ctx.sql().selectRun.get(runId);
  if (!row) throw new NotFoundError('run', runId);
  return row;
}

/** The mutable part of a run. */
export type RunChanges = Partial<Pick<RunRow, 'status' | 'current_stage' | 'error' | 'finished_at'>>;

/** Writes `changes` to the run (stamping `updated_at = now`) and returns the updated row. */
export function updateRun(ctx: SqliteContext, row: RunRow, changes: RunChanges, now: number): RunRow {
  const next: RunRow = { ...row, ...changes, updated_at: now };
  ctx.sql().updateRunState.run({
    id: next.id,
    status: next.status,
    current_stage: next.current_stage,
    error: next.error,
    finished_at: next.finished_at,
    updated_at: now,
  });
  return next;
}

/** What a job copies from its run; a finished job of the run carries the same values. */
export type JobOwner = Pick<RunRow, 'id' | 'pipeline' | 'tenant' | 'trace_id'>;

/**
 * Enqueues `spec` for `run`, ready at `availableAt`, with the idempotency key of `core/keys.ts`.
 * A live job already holding the key absorbs the enqueue (jobs_run_key + ON CONFLICT DO
 * NOTHING): returns false then.
 */
export function enqueueJob(ctx: SqliteContext, run: JobOwner, spec: JobSpec, now: number, availableAt = now): boolean {
  const key = jobIdempotencyKey(run.id, spec.stage, spec.kind);
  const { insertJob } = ctx.sql();
  const id = ctx.ids.next('job');
  const inserted = insertJob.run(id, run.id, run.pipeline, spec.stage, spec.queue, spec.kind, key, spec.maxAttempts, spec.priority, availableAt, now, run.tenant, run.trace_id).changes === 1;
  if (inserted && availableAt <= now) ctx.wake(spec.queue);
  return inserted;
}

/**
 * Ends a run that will never move again by itself: its jobs are deleted (remembered in
 * retired_jobs, so their holders learn `cancelled`), stages that had not succeeded become
 * `skipped`, and the run takes `status` with `error`.
 */
export function endRun(
  ctx: SqliteContext,
  row: RunRow,
  status: RunStatus,
  error: StageErrorRecord | null,
  now: number,
): RunRow {
  const sql = ctx.sql();
  sql.retireJobsOfRun.run(now, row.id);
  // Before the delete: the stages read their live jobs' claims (migration 0015).
  sql.skipUnfinishedStages.run(row.id);
  sql.deleteJobsOfRun.run(row.id);
  return updateRun(ctx, row, { status, error: toJsonOrNull(error), current_stage: null, finished_at: now }, now);
}
