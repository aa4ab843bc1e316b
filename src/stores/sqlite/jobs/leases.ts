/**
 * Leases of the job path: the fence every job mutation passes first (`checkLease`), heartbeats
 * (`renewLeases`), graceful hand-back (`releaseJobs`) and the reaper (`reapExpiredLeases`). Each
 * runs inside the caller's BEGIN IMMEDIATE transaction, so a lease check cannot change before
 * the writes that depend on it.
 */
import type { JobRelease, LeaseRef, LeaseRenewal, LeaseStatus, ReapResult } from '../../../core/ports/jobs.ts';
import type { SqliteContext } from '../context.ts';
import { toJson, type JobRow } from '../rows.ts';

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

/**
 * Checks `lease` at `now`: it must name a job that is still `leased`, with the same token, and
 * not expired. Returns the held job's row.
 */
export function checkLease(ctx: SqliteContext, lease: LeaseRef, now: number): LeaseCheck {
  const job = ctx.sql().selectJob.get(lease.jobId);
  if (!job) return { ok: false, reason: goneJobReason(ctx, lease.jobId) };
  if (job.state !== 'leased' || job.lease_token !== lease.token || (job.lease_until ?? 0) <= now) {
    return { ok: false, reason: 'lost' };
  }
  return { ok: true, job };
}

/**
 * Takes the next fence of the store's one sequence (job leases, cache builders and locks), inside
 * the caller's BEGIN IMMEDIATE transaction, so fences never repeat across processes.
 */
export function takeFence(ctx: SqliteContext): number {
  const counter = ctx.sql().takeFences.get(1);
  if (!counter) throw new Error('fence_counter row is missing');
  return counter.value;
}

/** Extends each lease still held by the `leaseMs` granted at claim, in input order. */
export function renewLeases(ctx: SqliteContext, renewals: readonly LeaseRenewal[]): LeaseStatus[] {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  return renewals.map((renewal): LeaseStatus => {
    const check = checkLease(ctx, renewal, now);
    if (!check.ok) return { status: check.reason };
    const { job } = check;
    const leaseUntil = now + (job.lease_ms ?? 0);
    sql.renewJob.run(leaseUntil, job.id);
    // The renewed lease is read from the job (migration 0015): the record changes for progress only.
    if (job.kind === 'stage' && renewal.progress !== undefined) {
      sql.setStageProgress.run({ run_id: job.run_id, stage: job.stage, progress: toJson(renewal.progress ?? null) });
    }
    return { status: 'renewed', leaseUntil };
  });
}

/**
 * Hands held jobs back unworked: ready after the release's delay, the claim's attempt not
 * counted. Only the holder of the current token may hand back; an expired-but-unclaimed lease is
 * still the caller's, and handing it back early is harmless.
 */
export function releaseJobs(ctx: SqliteContext, leases: readonly JobRelease[]): number {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  let released = 0;
  for (const lease of leases) {
    const job = sql.selectJob.get(lease.jobId);
    if (!job || job.state !== 'leased' || job.lease_token !== lease.token) continue;
    const delayMs = Math.max(0, lease.delayMs ?? 0);
    sql.unleaseJob.run({
      id: job.id,
      state: 'ready',
      available_at: now + delayMs,
      attempt: Math.max(0, job.attempt - 1),
      last_error: job.last_error,
      lock_wait_since: lease.lockWait === true ? (job.lock_wait_since ?? now) : null,
    });
    if (job.kind === 'stage') sql.releaseStage.run(job.started_at, job.run_id, job.stage);
    if (delayMs === 0) ctx.wake(job.queue);
    released += 1;
  }
  return released;
}

/** Moves every job whose lease expired back to ready (a redelivery), counted per queue. */
export function reapExpiredLeases(ctx: SqliteContext): ReapResult {
  const sql = ctx.sql();
  const redelivered: Record<string, number> = {};
  for (const job of sql.reapExpired.all(ctx.clock.now())) {
    if (job.kind === 'stage') sql.reapStage.run(job.started_at, job.run_id, job.stage);
    redelivered[job.queue] = (redelivered[job.queue] ?? 0) + 1;
    ctx.wake(job.queue);
  }
  return { redelivered };
}
