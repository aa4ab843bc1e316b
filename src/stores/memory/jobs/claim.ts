/**
 * `claimJobs` of the memory store: picks the due jobs of each requested queue in claim order and
 * leases them, with a fence from the state's one sequence, at one instant.
 */
import type { Job } from '../../../core/model.ts';
import { JobKind, JobState, RunStatus, StageStatus } from '../../../core/model.ts';
import type { ClaimRequest, ClaimedJob } from '../../../core/ports/jobs.ts';
import type { MemoryState } from '../state.ts';

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
