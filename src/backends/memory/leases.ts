/**
 * Claims and leases for the memory backend: claim a batch, heartbeat, hand back, reap.
 */
import type { Job } from '../../core/model.ts';
import { JobKind, JobState, RunStatus, StageStatus } from '../../core/model.ts';
import type { ClaimRequest, ClaimedJob, LeaseRef, LeaseRenewal, LeaseStatus, ReapResult } from '../../core/ports.ts';
import type { MemoryStore } from './store.ts';

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
function leaseJob(store: MemoryStore, job: Job, request: ClaimRequest, now: number): ClaimedJob {
  const redelivered = job.state === JobState.leased;
  if (redelivered) job.redeliveries += 1;
  job.state = JobState.leased;
  job.leaseOwner = request.workerId;
  job.leaseToken = store.ids.token();
  job.fence = store.nextFence();
  job.leaseUntil = now + request.leaseMs;
  job.leaseMs = request.leaseMs;
  job.attempt += 1;

  const run = store.requireRun(job.runId);
  // A rollback job compensates a stage that succeeded: that record's status must stay as is.
  if (job.kind === JobKind.stage) {
    const record = store.stageRecord(job.runId, job.stage);
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
  const ledger = store.ledger.get(job.idempotencyKey);
  return {
    job,
    run,
    outputs: store.outputsOf(job.runId),
    ...(ledger ? { ledgerOutput: ledger.output } : {}),
    exhausted: job.attempt > job.maxAttempts,
    redelivered,
  };
}

/** Claims up to `limit` due jobs of one queue (none from a paused queue). */
function claimFromQueue(store: MemoryStore, request: ClaimRequest, now: number): ClaimedJob[] {
  if (request.limit <= 0 || store.queuePaused.get(request.queue) === true) return [];
  const due = [...store.jobs.values()]
    .filter((j) => j.queue === request.queue && isClaimable(j, now))
    .sort(byClaimOrder)
    .slice(0, request.limit);
  return due.map((job) => leaseJob(store, job, request, now));
}

/**
 * Claims from every requested queue at one instant, grouped in request order. A queue named
 * twice is served twice: the second request sees the first one's jobs as leased.
 */
export function claimJobs(store: MemoryStore, requests: readonly ClaimRequest[]): ClaimedJob[] {
  const now = store.clock.now();
  return requests.flatMap((request) => claimFromQueue(store, request, now));
}

/** Extends each lease still held; tells `cancelled` apart from `lost` for deleted jobs. */
export function renewLeases(store: MemoryStore, renewals: readonly LeaseRenewal[]): LeaseStatus[] {
  const now = store.clock.now();
  return renewals.map((renewal): LeaseStatus => {
    const check = store.checkLease(renewal, now);
    if (!check.ok) return { status: check.reason };
    const { job } = check;
    job.leaseUntil = now + (job.leaseMs ?? 0);
    if (job.kind === JobKind.stage) {
      const record = store.stageRecord(job.runId, job.stage);
      record.leaseUntil = job.leaseUntil;
      if (renewal.progress !== undefined) record.progress = structuredClone(renewal.progress);
    }
    return { status: 'renewed', leaseUntil: job.leaseUntil };
  });
}

/** Hands held jobs back unworked: ready now, the claim's attempt not counted. */
export function releaseJobs(store: MemoryStore, leases: readonly LeaseRef[]): number {
  const now = store.clock.now();
  let released = 0;
  for (const lease of leases) {
    const job = store.jobs.get(lease.jobId);
    // Only the holder of the current token may hand back; an expired-but-unclaimed lease is
    // still the caller's, and handing it back early is harmless.
    if (!job || job.state !== JobState.leased || job.leaseToken !== lease.token) continue;
    job.state = JobState.ready;
    job.attempt = Math.max(0, job.attempt - 1);
    job.availableAt = now;
    store.clearLease(job);
    if (job.kind === JobKind.stage) {
      const record = store.stageRecord(job.runId, job.stage);
      record.status = StageStatus.pending;
      record.attempts = Math.max(0, record.attempts - 1);
      record.leaseOwner = null;
      record.leaseUntil = null;
    }
    store.pendingWakes.add(job.queue);
    released += 1;
  }
  return released;
}

/** Moves jobs whose lease expired back to ready (a redelivery), counted per queue. */
export function reapExpiredLeases(store: MemoryStore): ReapResult {
  const now = store.clock.now();
  const redelivered: Record<string, number> = {};
  for (const job of store.jobs.values()) {
    if (job.state !== JobState.leased || (job.leaseUntil ?? 0) > now) continue;
    job.state = JobState.ready;
    job.redeliveries += 1;
    store.clearLease(job);
    if (job.kind === JobKind.stage) {
      const record = store.stageRecord(job.runId, job.stage);
      record.leaseOwner = null;
      record.leaseUntil = null;
    }
    redelivered[job.queue] = (redelivered[job.queue] ?? 0) + 1;
    store.pendingWakes.add(job.queue);
  }
  return { redelivered };
}
