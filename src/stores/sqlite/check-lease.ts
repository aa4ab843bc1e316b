/**
 * The fence every job mutation passes first: the presented lease must name a job that is still
 * `leased`, with the same token, and not expired. Runs inside the caller's BEGIN IMMEDIATE
 * transaction, so the answer cannot change before the caller's writes.
 */
import type { LeaseRef } from '../../core/ports/jobs.ts';
import type { SqliteContext } from './context.ts';
import type { JobRow } from './rows.ts';

/** Why a lease was refused: `cancelled` when the run was cancelled or superseded meanwhile. */
export type RefusalReason = 'lost' | 'cancelled';

/** Outcome of checking a presented lease. */
export type LeaseCheck = { ok: true; job: JobRow } | { ok: false; reason: RefusalReason };

/** Why the lease on a job that no longer exists is refused (see retired_jobs). */
function goneJobReason(ctx: SqliteContext, jobId: string): RefusalReason {
  const status = ctx.sql().selectRetiredJobRunStatus.get(jobId)?.status;
  return status === 'cancelled' || status === 'superseded' ? 'cancelled' : 'lost';
}

/**
 * Why a lease that a fenced write just refused was refused: a job that is gone because its run
 * was cancelled or superseded reads `cancelled`; every other refusal reads `lost`.
 */
export function refusalReason(ctx: SqliteContext, jobId: string): RefusalReason {
  return ctx.sql().selectJob.get(jobId) ? 'lost' : goneJobReason(ctx, jobId);
}

/** Checks `lease` at `now` and returns the held job's row. */
export function checkLease(ctx: SqliteContext, lease: LeaseRef, now: number): LeaseCheck {
  const job = ctx.sql().selectJob.get(lease.jobId);
  if (!job) return { ok: false, reason: goneJobReason(ctx, lease.jobId) };
  if (job.state !== 'leased' || job.lease_token !== lease.token || (job.lease_until ?? 0) <= now) {
    return { ok: false, reason: 'lost' };
  }
  return { ok: true, job };
}
