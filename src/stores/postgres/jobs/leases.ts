/**
 * Lease upkeep: heartbeats (`renewLeases`), graceful hand-back (`releaseJobs`) and the reaper
 * (`reapExpiredLeases`). Each is ONE statement over all its jobs (see sql/jobs.ts).
 */
import type { JsonValue } from '../../../core/model.ts';
import type { JobRelease, LeaseRenewal, LeaseStatus, ReapResult } from '../../../core/ports/jobs.ts';
import type { PgContext } from '../context.ts';
import { queryRows } from '../database.ts';
import { toJsonText } from '../rows.ts';

/** Extends each lease still held by the `leaseMs` granted at claim, in input order. */
export async function renewLeases(ctx: PgContext, renewals: readonly LeaseRenewal[]): Promise<LeaseStatus[]> {
  if (renewals.length === 0) return [];
  const rows = await queryRows<{ lease_until: number | null; refusal: 'lost' | 'cancelled' | null }>(ctx.pool, ctx.sql.jobs.renewLeases, [
    ctx.now(),
    renewals.map((r) => r.jobId),
    renewals.map((r) => r.token),
    renewals.map((r) => r.progress !== undefined),
    // A JSON `null` marker is stored as JSON null, not "no marker".
    renewals.map((r) => (r.progress === undefined ? null : toJsonText(r.progress as JsonValue))),
  ]);
  return rows.map((row): LeaseStatus => {
    if (row.lease_until !== null) return { status: 'renewed', leaseUntil: row.lease_until };
    return { status: row.refusal === 'cancelled' ? 'cancelled' : 'lost' };
  });
}

/**
 * Hands held jobs back unworked: ready after the release's delay, the claim's attempt not
 * counted. Only the holder of the current token may hand back; an expired-but-unclaimed lease is
 * still the caller's, and handing it back early is harmless.
 */
export async function releaseJobs(ctx: PgContext, leases: readonly JobRelease[]): Promise<number> {
  if (leases.length === 0) return 0;
  const rows = await queryRows<{ queue: string; ready_now: boolean }>(ctx.pool, ctx.sql.jobs.releaseJobs, [
    ctx.now(),
    leases.map((l) => l.jobId),
    leases.map((l) => l.token),
    ctx.channel,
    // Delays are whole milliseconds (bigint columns).
    leases.map((l) => Math.max(0, Math.round(l.delayMs ?? 0))),
    leases.map((l) => l.lockWait === true),
  ]);
  ctx.wake(rows.filter((row) => row.ready_now).map((row) => row.queue));
  return rows.length;
}

/** Moves every job whose lease expired back to ready (a redelivery), counted per queue. */
export async function reapExpiredLeases(ctx: PgContext): Promise<ReapResult> {
  const rows = await queryRows<{ queue: string; redelivered: number }>(ctx.pool, ctx.sql.jobs.reapExpired, [ctx.now(), ctx.channel]);
  ctx.wake(rows.map((row) => row.queue));
  return { redelivered: Object.fromEntries(rows.map((row) => [row.queue, row.redelivered])) };
}
