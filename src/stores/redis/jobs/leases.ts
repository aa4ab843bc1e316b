/**
 * Lease upkeep of the Redis store: heartbeats (`renewLeases`), hand-back (`releaseJobs`) and the
 * reaper (`reapExpiredLeases`), each ONE call of its script (routines/jobs-renew.lua,
 * jobs-release.lua, jobs-reap.lua).
 */
import type { JobRelease, LeaseRenewal, LeaseStatus, ReapResult } from '../../../core/ports/jobs.ts';
import type { RedisContext } from '../context.ts';
import { toJson } from '../rows.ts';
import { wakeAfter, type Woken } from './scripts.ts';

type RenewAnswer = ({ status: 'renewed'; leaseUntil: string } | { status: 'lost' | 'cancelled' })[];

/** Extends each lease still held, in input order. */
export async function renewLeases(ctx: RedisContext, renewals: readonly LeaseRenewal[]): Promise<LeaseStatus[]> {
  if (renewals.length === 0) return [];
  const batch = renewals.map((r) => ({ jobId: r.jobId, token: r.token, progress: r.progress === undefined ? undefined : toJson(r.progress) }));
  const answer = await ctx.call<RenewAnswer>('jobs-renew', [JSON.stringify(batch)]);
  return answer.map((s): LeaseStatus => (s.status === 'renewed' ? { status: 'renewed', leaseUntil: Number(s.leaseUntil) } : { status: s.status }));
}

/** Hands held jobs back unworked; returns how many were. */
export async function releaseJobs(ctx: RedisContext, leases: readonly JobRelease[]): Promise<number> {
  if (leases.length === 0) return 0;
  const batch = leases.map((l) => ({ jobId: l.jobId, token: l.token, delayMs: String(Math.max(0, l.delayMs ?? 0)), lockWait: l.lockWait === true }));
  const answer = await ctx.call<Woken & { released: number }>('jobs-release', [JSON.stringify(batch)]);
  wakeAfter(ctx, answer);
  return answer.released;
}

/** Moves expired leases back to ready, counted per queue. */
export async function reapExpiredLeases(ctx: RedisContext): Promise<ReapResult> {
  const answer = await ctx.call<{ redelivered: Record<string, number> | [] }>('jobs-reap');
  const redelivered = Array.isArray(answer.redelivered) ? {} : answer.redelivered;
  const queues = Object.keys(redelivered);
  if (queues.length > 0) ctx.wake(queues);
  return { redelivered };
}
