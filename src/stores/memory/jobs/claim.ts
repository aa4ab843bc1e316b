/**
 * `claimJobs` of the memory store: picks the due jobs of each requested queue in claim order and
 * leases them, with a fence from the state's one sequence, at one instant.
 */
import type { Job } from '../../../core/model.ts';
import { JobKind, JobState, RunStatus, StageStatus } from '../../../core/model.ts';
import type { ClaimRequest, ClaimedJob } from '../../../core/ports/jobs.ts';
import { comparePlain, inClaimOrder } from '../../shared/claim-order.ts';
import { dueJobs, type QueueJobs } from '../job-index.ts';
import type { MemoryState } from '../state.ts';

/** Retries of the queue running now: leased, lease not expired, past their first attempt. */
function retriesRunning(jobs: QueueJobs, now: number): number {
  let n = 0;
  for (const job of jobs.leased) if ((job.leaseUntil ?? 0) > now && job.attempt >= 2) n += 1;
  return n;
}

/**
 * The due ready jobs of the queue's lanes that `retry` picks, at most `limit` per lane. A lane
 * holds jobs of one tenant at one priority, so in the claim order each of its jobs comes after
 * the lane's earlier ones: none past the first `limit` of its lane can be among the first
 * `limit` claimed, and leaving them out changes no other candidate's rank.
 */
function dueReady(jobs: QueueJobs, retry: boolean, now: number, limit: number): Job[] {
  const due: Job[] = [];
  for (const lane of jobs.lanes.values()) if (lane.retry === retry) due.push(...dueJobs(lane, now, limit));
  return due;
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
  state.jobChanged(job);

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

/**
 * Serves the requests of one queue (in request order) from one fair order: the first request
 * gets its first `limit` jobs, the next the following ones. A paused queue yields none.
 */
function claimFromQueue(state: MemoryState, requests: readonly ClaimRequest[], now: number): ClaimedJob[][] {
  const queue = requests[0]?.queue ?? '';
  const limits = requests.map((r) => Math.max(0, Math.floor(r.limit)));
  const total = limits.reduce((a, b) => a + b, 0);
  if (total === 0 || state.queuePaused.get(queue) === true) return requests.map(() => []);
  const jobs = state.jobIndex.queue(queue);
  if (!jobs) return requests.map(() => []);
  const expired = [...jobs.leased].filter((j) => (j.leaseUntil ?? 0) <= now);
  const caps = requests.flatMap((r) => (r.maxRetriesRunning === undefined ? [] : [r.maxRetriesRunning]));
  // Without a cap: every due ready job, and the first `total` expired leases in plain order; with
  // one: the first attempts, and the first `budget` retries (ready or expired) in plain order.
  // Expired leases are all retries (a claim counts the attempt).
  const capped = caps.length > 0;
  const budget = capped ? Math.max(0, Math.min(...caps) - retriesRunning(jobs, now)) : total;
  const retries = capped ? [...dueReady(jobs, true, now, budget), ...expired] : expired;
  const limited = retries.sort(comparePlain).slice(0, budget);
  const free = capped ? dueReady(jobs, false, now, total) : [...dueReady(jobs, false, now, total), ...dueReady(jobs, true, now, total)];
  const candidates = [...free, ...limited];
  const ordered = inClaimOrder(candidates, (job) => job).slice(0, total);
  let at = 0;
  return requests.map((request, i) => {
    const mine = ordered.slice(at, at + (limits[i] ?? 0));
    at += mine.length;
    return mine.map((job) => leaseJob(state, job, request, now));
  });
}

/**
 * Claims from every requested queue at one instant, grouped in request order. Requests naming
 * the same queue share one pick (see `JobsPort.claim`).
 */
export function claimJobs(state: MemoryState, requests: readonly ClaimRequest[]): ClaimedJob[] {
  const now = state.clock.now();
  const byQueue = new Map<string, ClaimRequest[]>();
  for (const request of requests) {
    const list = byQueue.get(request.queue);
    if (list) list.push(request);
    else byQueue.set(request.queue, [request]);
  }
  const results = new Map<ClaimRequest, ClaimedJob[]>();
  for (const list of byQueue.values()) {
    const claimed = claimFromQueue(state, list, now);
    list.forEach((request, i) => results.set(request, claimed[i] ?? []));
  }
  return requests.flatMap((request) => results.get(request) ?? []);
}
