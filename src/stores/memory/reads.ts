/**
 * The `reads` sub-port of the memory store: runs, jobs, queue stats, ledger, failed attempts and
 * dead letters.
 */
import type { FailedAttempt, Job, LedgerEntry, QueueStats, Run } from '../../core/model.ts';
import { JobKind, JobState, RunStatus } from '../../core/model.ts';
import type { ListDeadLettersQuery, ListJobsQuery, ListRunsQuery, ReadsPort, RunDetail } from '../../core/ports/reads.ts';
import type { MemoryContext } from './context.ts';
import type { MemoryState } from './state.ts';

/** Ids sort by creation time, so comparing them orders by age. */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A run with its stage records in pipeline order, or null. */
function getRun(state: MemoryState, runId: string): RunDetail | null {
  const run = state.runs.get(runId);
  if (!run) return null;
  const stages = [...(state.stages.get(runId) ?? [])].sort((a, b) => a.index - b.index);
  return { run, stages };
}

/** A job, or null (deleted or never existed). */
function getJob(state: MemoryState, jobId: string): Job | null {
  return state.jobs.get(jobId) ?? null;
}

/** Runs matching the filter, newest first. */
function listRuns(state: MemoryState, query: ListRunsQuery): Run[] {
  const { before } = query;
  return [...state.runs.values()]
    .filter(
      (r) =>
        (query.pipeline === undefined || r.pipeline === query.pipeline) &&
        (query.status === undefined || r.status === query.status) &&
        (query.subjectId === undefined || r.subjectId === query.subjectId) &&
        (query.tenant === undefined || r.tenant === query.tenant) &&
        (query.createdAfter === undefined || r.createdAt >= query.createdAfter) &&
        (query.createdBefore === undefined || r.createdAt < query.createdBefore) &&
        (before === undefined || r.id < before),
    )
    .sort((a, b) => compareIds(b.id, a.id))
    .slice(0, Math.max(0, query.limit));
}

/** Jobs matching the filter, oldest first. */
function listJobs(state: MemoryState, query: ListJobsQuery): Job[] {
  return [...state.jobs.values()]
    .filter(
      (j) =>
        (query.queue === undefined || j.queue === query.queue) &&
        (query.runId === undefined || j.runId === query.runId) &&
        (query.state === undefined || j.state === query.state) &&
        (query.tenant === undefined || j.tenant === query.tenant),
    )
    .sort((a, b) => a.enqueuedAt - b.enqueuedAt || compareIds(a.id, b.id))
    .slice(0, Math.max(0, query.limit));
}

function emptyStats(queue: string, paused: boolean): QueueStats {
  return { queue, paused, ready: 0, scheduled: 0, leased: 0, parked: 0, dead: 0, oldestReadyAgeMs: 0 };
}

/** Counts one job into its queue's stats. */
function countJob(stats: QueueStats, job: Job, now: number): void {
  if (job.state === JobState.ready) {
    if (job.availableAt > now) {
      stats.scheduled += 1;
    } else {
      stats.ready += 1;
      // Age since the job could first run, so a backoff does not count as queueing delay.
      stats.oldestReadyAgeMs = Math.max(stats.oldestReadyAgeMs, now - job.availableAt);
    }
  } else {
    stats[job.state] += 1;
  }
}

/** Every queue that has jobs or was paused (or resumed), by name. */
function queueStats(state: MemoryState): QueueStats[] {
  const now = state.clock.now();
  const byQueue = new Map<string, QueueStats>();
  const statsOf = (queue: string): QueueStats => {
    let stats = byQueue.get(queue);
    if (!stats) {
      stats = emptyStats(queue, state.queuePaused.get(queue) === true);
      byQueue.set(queue, stats);
    }
    return stats;
  };
  for (const queue of state.queuePaused.keys()) statsOf(queue);
  for (const job of state.jobs.values()) countJob(statsOf(job.queue), job, now);
  return [...byQueue.values()].sort((a, b) => compareIds(a.queue, b.queue));
}

/** Ledger entries of a run, in completion order. */
function readLedger(state: MemoryState, runId: string): LedgerEntry[] {
  return [...state.ledger.values()].filter((e) => e.runId === runId);
}

/** Failed attempts of a run, in commit order. */
function listAttempts(state: MemoryState, runId: string): FailedAttempt[] {
  return state.failedAttempts.get(runId) ?? [];
}

/** Dead stage jobs of dead-lettered runs, newest first. */
function listDeadLetters(state: MemoryState, query: ListDeadLettersQuery): Job[] {
  const { before } = query;
  return [...state.jobs.values()]
    .filter(
      (j) =>
        j.state === JobState.dead &&
        j.kind === JobKind.stage &&
        state.runs.get(j.runId)?.status === RunStatus.dead_lettered &&
        (query.code === undefined || j.lastError?.code === query.code) &&
        (query.queue === undefined || j.queue === query.queue) &&
        (query.tenant === undefined || j.tenant === query.tenant) &&
        (before === undefined || j.id < before),
    )
    .sort((a, b) => compareIds(b.id, a.id))
    .slice(0, Math.max(0, query.limit));
}

/** The read-only views of the state. */
export function createReadsPort(ctx: MemoryContext): ReadsPort {
  const { state } = ctx;
  return {
    getRun: ctx.atomic((runId) => getRun(state, runId)),
    listRuns: ctx.atomic((query) => listRuns(state, query)),
    getJob: ctx.atomic((jobId) => getJob(state, jobId)),
    listJobs: ctx.atomic((query) => listJobs(state, query)),
    queueStats: ctx.atomic(() => queueStats(state)),
    readLedger: ctx.atomic((runId) => readLedger(state, runId)),
    listAttempts: ctx.atomic((runId) => listAttempts(state, runId)),
    listDeadLetters: ctx.atomic((query) => listDeadLetters(state, query)),
  };
}
