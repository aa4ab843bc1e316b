/**
 * Lease upkeep of the memory store: heartbeats (`renewLeases`), graceful hand-back
 * (`releaseJobs`) and the reaper (`reapExpiredLeases`). Lease checks are the state's
 * (`MemoryState.checkLease`), shared with commits.
 */
import { JobKind, JobState, StageStatus } from '../../../core/model.ts';
import type { JobRelease, LeaseRenewal, LeaseStatus, ReapResult } from '../../../core/ports/jobs.ts';
import { copy } from '../rows.ts';
import type { MemoryState } from '../state.ts';

/** Extends each lease still held; tells `cancelled` apart from `lost` for deleted jobs. */
export function renewLeases(state: MemoryState, renewals: readonly LeaseRenewal[]): LeaseStatus[] {
  const now = state.clock.now();
  return renewals.map((renewal): LeaseStatus => {
    const check = state.checkLease(renewal, now);
    if (!check.ok) return { status: check.reason };
    const { job } = check;
    job.leaseUntil = now + (job.leaseMs ?? 0);
    if (job.kind === JobKind.stage) {
      const record = state.stageRecord(job.runId, job.stage);
      record.leaseUntil = job.leaseUntil;
      if (renewal.progress !== undefined) record.progress = copy(renewal.progress);
    }
    return { status: 'renewed', leaseUntil: job.leaseUntil };
  });
}

/** Hands held jobs back unworked: ready after the release's delay, the claim's attempt not counted. */
export function releaseJobs(state: MemoryState, leases: readonly JobRelease[]): number {
  const now = state.clock.now();
  let released = 0;
  for (const lease of leases) {
    const job = state.jobs.get(lease.jobId);
    // Only the holder of the current token may hand back; an expired-but-unclaimed lease is
    // still the caller's, and handing it back early is harmless.
    if (!job || job.state !== JobState.leased || job.leaseToken !== lease.token) continue;
    job.state = JobState.ready;
    job.attempt = Math.max(0, job.attempt - 1);
    const delayMs = Math.max(0, lease.delayMs ?? 0);
    job.availableAt = now + delayMs;
    job.lockWaitSince = lease.lockWait === true ? (job.lockWaitSince ?? now) : null;
    state.clearLease(job);
    state.jobChanged(job);
    if (job.kind === JobKind.stage) {
      const record = state.stageRecord(job.runId, job.stage);
      record.status = StageStatus.pending;
      record.attempts = Math.max(0, record.attempts - 1);
      record.leaseOwner = null;
      record.leaseUntil = null;
    }
    if (delayMs === 0) state.pendingWakes.add(job.queue);
    released += 1;
  }
  return released;
}

/** Moves jobs whose lease expired back to ready (a redelivery), counted per queue. */
export function reapExpiredLeases(state: MemoryState): ReapResult {
  const now = state.clock.now();
  const redelivered: Record<string, number> = {};
  // Copied out first: refiling moves each job out of the leased set being read.
  for (const job of [...state.jobIndex.leasedJobs()]) {
    if ((job.leaseUntil ?? 0) > now) continue;
    job.state = JobState.ready;
    job.redeliveries += 1;
    state.clearLease(job);
    state.jobChanged(job);
    if (job.kind === JobKind.stage) {
      const record = state.stageRecord(job.runId, job.stage);
      record.leaseOwner = null;
      record.leaseUntil = null;
    }
    redelivered[job.queue] = (redelivered[job.queue] ?? 0) + 1;
    state.pendingWakes.add(job.queue);
  }
  return { redelivered };
}
