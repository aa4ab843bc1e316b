/**
 * Claims and leases for the memory store: claim a batch, heartbeat, hand back, reap.
 */
import type { Job } from '../../core/model.ts';
import { JobKind, JobState, RunStatus, StageStatus } from '../../core/model.ts';
import type { ClaimRequest, ClaimedJob, LeaseRef, LeaseRenewal, LeaseStatus, ReapResult } from '../../core/ports/jobs.ts';
import type { MemoryState } from './state.ts';

/** Claim order: priority (lower first), then availableAt, then id. */
function byClaimOrder(a: Job, b: Job): number {
  return a.priority - b.priority || a.availableAt - b.availableAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Ready and due, or leased with an expired lease (a redelivery). */
function isClaimable(job: Job, now: number): boolean {
  if (job.state === JobState.ready) return job.availableAt <= now;
  return job.state === JobState.leased && (job.leaseUntil ?? 0) <= now;
}

/** Leases one job to `request.workerId` and updates its stage record and run. */
function leaseJob(state: MemoryState, job: Job, request: ClaimRequest, now: number): ClaimedJob {
  const redelivered = job.state === JobState.leased;
  if (redelivered) job.redeliveries += 1;
  job.state = JobState.leased;
  job.leaseOwner = request.workerId;
  job.leaseToken = state.ids.token();
  job.fence = state.nextFence();
  job.leaseUntil = now + request.leaseMs;
  job.leaseMs = request.leaseMs;
  job.attempt += 1;

  const run = state.requireRun(job.runId);
  // A rollback job compensates a stage that succeeded: that record's status must stay as is.
  if (job.kind === JobKind.stage) {
    const record = state.stageRecord(job.runId, job.stage);
    record.status = StageStatus.running;
    record.attempts += 1;
    record.leaseOwner = request.workerId;
    record.leaseUntil = job.leaseUntil;
    record.startedAt ??= now;
  }
  if (run.status === RunStatus.queued) {
    run.status = RunStatus.running;
    run.updatedAt = now;
  }
  const ledger = state.ledger.get(job.idempotencyKey);
  return {
    job,
    run,
    outputs: state.outputsOf(job.runId),
    ...(ledger ? { ledgerOutput: ledger.output } : {}),
    exhausted: job.attempt > job.maxAttempts,
    redelivered,
  };
}

/** Claims up to `limit` due jobs of one queue (none from a paused queue). */
function claimFromQueue(state: MemoryState, request: ClaimRequest, now: number): ClaimedJob[] {
  if (request.limit <= 0 || state.queuePaused.get(request.queue) === true) return [];
  const due = [...state.jobs.values()]
    .filter((j) => j.queue === request.queue && isClaimable(j, now))
    .sort(byClaimOrder)
    .slice(0, request.limit);
  return due.map((job) => leaseJob(state, job, request, now));
}

/**
 * Claims from every requested queue at one instant, grouped in request order. A queue named
 * twice is served twice: the second request sees the first one's jobs as leased.
 */
export function claimJobs(state: MemoryState, requests: readonly ClaimRequest[]): ClaimedJob[] {
  const now = state.clock.now();
  return requests.flatMap((request) => claimFromQueue(state, request, now));
}

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
      if (renewal.progress !== undefined) record.progress = structuredClone(renewal.progress);
    }
    return { status: 'renewed', leaseUntil: job.leaseUntil };
  });
}

/** Hands held jobs back unworked: ready now, the claim's attempt not counted. */
export function releaseJobs(state: MemoryState, leases: readonly LeaseRef[]): number {
  const now = state.clock.now();
  let released = 0;
  for (const lease of leases) {
    const job = state.jobs.get(lease.jobId);
    // Only the holder of the current token may hand back; an expired-but-unclaimed lease is
    // still the caller's, and handing it back early is harmless.
    if (!job || job.state !== JobState.leased || job.leaseToken !== lease.token) continue;
    job.state = JobState.ready;
    job.attempt = Math.max(0, job.attempt - 1);
    job.availableAt = now;
    state.clearLease(job);
    if (job.kind === JobKind.stage) {
      const record = state.stageRecord(job.runId, job.stage);
      record.status = StageStatus.pending;
      record.attempts = Math.max(0, record.attempts - 1);
      record.leaseOwner = null;
      record.leaseUntil = null;
    }
    state.pendingWakes.add(job.queue);
    released += 1;
  }
  return released;
}

/** Moves jobs whose lease expired back to ready (a redelivery), counted per queue. */
export function reapExpiredLeases(state: MemoryState): ReapResult {
  const now = state.clock.now();
  const redelivered: Record<string, number> = {};
  for (const job of state.jobs.values()) {
    if (job.state !== JobState.leased || (job.leaseUntil ?? 0) > now) continue;
    job.state = JobState.ready;
    job.redeliveries += 1;
    state.clearLease(job);
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
