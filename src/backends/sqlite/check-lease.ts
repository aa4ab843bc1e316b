/**
 * The fence every job mutation passes first: the presented lease must name a job that is still
 * `leased`, with the same token, and not expired. Runs inside the caller's BEGIN IMMEDIATE
 * transaction, so the answer cannot change before the caller's writes.
 */
import type { LeaseRef } from '../../core/ports.ts';
import type { SqliteContext } from './context.ts';
import type { JobRow, RunRow } from './rows.ts';

/** Outcome of checking a presented lease. */
export type LeaseCheck = { ok: true; job: JobRow; run: RunRow } | { ok: false; reason: 'lost' | 'cancelled' };

/**
 * Checks `lease` at `now`. A job that is gone because its run was cancelled or superseded (it
 * is in retired_jobs) reads `cancelled`; every other refusal reads `lost`.
 */
export function checkLease(ctx: SqliteContext, lease: LeaseRef, now: number): LeaseCheck {
  const sql = ctx.sql();
  const job = sql.selectJob.get(lease.jobId);
  if (!job) {
    const status = sql.selectRetiredJobRunStatus.get(lease.jobId)?.status;
    return { ok: false, reason: status === 'cancelled' || status === 'superseded' ? 'cancelled' : 'lost' };
  }
  if (job.state !== 'leased' || job.lease_token !== lease.token || (job.lease_until ?? 0) <= now) {
    return { ok: false, reason: 'lost' };
  }
  const run = sql.selectRun.get(job.run_id);
  // The foreign key makes a job without a run impossible; treat it as lost rather than throw.
  if (!run) return { ok: false, reason: 'lost' };
  return { ok: true, job, run };
}
