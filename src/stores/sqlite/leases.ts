/**
 * Lease upkeep: heartbeats (`renewLeases`), graceful hand-back (`releaseJobs`) and the reaper
 * (`reapExpiredLeases`). Each call is one BEGIN IMMEDIATE transaction over all its jobs.
 */
import type { LeaseRef, LeaseRenewal, LeaseStatus, ReapResult } from '../../core/ports/jobs.ts';
import { checkLease } from './check-lease.ts';
import type { SqliteContext } from './context.ts';
import { toJson } from './rows.ts';

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
    if (job.kind === 'stage') {
      const hasProgress = renewal.progress !== undefined;
      sql.renewStage.run({
        run_id: job.run_id,
        stage: job.stage,
        lease_until: leaseUntil,
        set_progress: hasProgress ? 1 : 0,
        progress: hasProgress ? toJson(renewal.progress ?? null) : null,
      });
    }
    return { status: 'renewed', leaseUntil };
  });
}

/**
 * Hands held jobs back unworked: ready now, the claim's attempt not counted. Only the holder of
 * the current token may hand back; an expired-but-unclaimed lease is still the caller's, and
 * handing it back early is harmless.
 */
export function releaseJobs(ctx: SqliteContext, leases: readonly LeaseRef[]): number {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  let released = 0;
  for (const lease of leases) {
    const job = sql.selectJob.get(lease.jobId);
    if (!job || job.state !== 'leased' || job.lease_token !== lease.token) continue;
    sql.unleaseJob.run({
      id: job.id,
      state: 'ready',
      available_at: now,
      attempt: Math.max(0, job.attempt - 1),
      last_error: job.last_error,
    });
    if (job.kind === 'stage') sql.releaseStage.run(job.run_id, job.stage);
    ctx.wake(job.queue);
    released += 1;
  }
  return released;
}

/** Moves every job whose lease expired back to ready (a redelivery), counted per queue. */
export function reapExpiredLeases(ctx: SqliteContext): ReapResult {
  const sql = ctx.sql();
  const redelivered: Record<string, number> = {};
  for (const job of sql.reapExpired.all(ctx.clock.now())) {
    if (job.kind === 'stage') sql.clearStageLease.run(job.run_id, job.stage);
    redelivered[job.queue] = (redelivered[job.queue] ?? 0) + 1;
    ctx.wake(job.queue);
  }
  return { redelivered };
}
