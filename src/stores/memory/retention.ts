/**
 * The `retention` sub-port of the memory store: deletes runs past their retention period with
 * everything that is theirs, and request records past theirs (see `RetentionPort`).
 */
import type { Run } from '../../core/model.ts';
import { JobState } from '../../core/model.ts';
import type { PruneCounts, RetentionPolicy, RetentionPort } from '../../core/ports/retention.ts';
import { noPruneCounts, RETENTION_KIND_OF_STATUS } from '../../core/ports/retention.ts';
import type { MemoryContext } from './context.ts';
import { pairKey } from './rows.ts';
import { subjectKey, type MemoryState } from './state.ts';

/** The retention period of `run`'s status, or null (kept forever, or not prunable at all). */
function periodOf(run: Run, policy: RetentionPolicy): number | null {
  const kind = (RETENTION_KIND_OF_STATUS as Record<string, keyof RetentionPolicy>)[run.status];
  return kind === undefined ? null : policy[kind];
}

/**
 * Expired runs, oldest finished first (ties by id), at most `limit` (all with Infinity). One pass
 * over the state for what protects a run (live jobs, subjects' highest versions), then one over
 * the runs.
 */
function expiredRuns(state: MemoryState, policy: RetentionPolicy, limit: number): Run[] {
  const now = state.clock.now();
  const withLiveJob = new Set<string>();
  for (const job of state.jobs.values()) if (job.state !== JobState.dead) withLiveJob.add(job.runId);
  const highest = new Map<string, number>();
  for (const run of state.runs.values()) {
    const key = subjectKey(run);
    if (key !== null) highest.set(key, Math.max(highest.get(key) ?? -Infinity, run.subjectVersion ?? 0));
  }
  const expired = [...state.runs.values()].filter((run) => {
    const period = periodOf(run, policy);
    if (period === null || run.finishedAt === null || run.finishedAt + period > now || withLiveJob.has(run.id)) return false;
    const key = subjectKey(run);
    return key === null || (highest.get(key) ?? 0) > (run.subjectVersion ?? 0);
  });
  expired.sort((a, b) => (a.finishedAt ?? 0) - (b.finishedAt ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return expired.slice(0, limit);
}

/** Keys of the request records past `requestsMs`, oldest first, at most `limit`. */
function expiredRequests(state: MemoryState, policy: RetentionPolicy, limit: number): string[] {
  if (policy.requestsMs === null) return [];
  const cutoff = state.clock.now() - policy.requestsMs;
  return [...state.requestRecords.entries()]
    .filter(([, record]) => record.createdAt <= cutoff)
    .sort(([, a], [, b]) => a.createdAt - b.createdAt)
    .slice(0, limit)
    .map(([key]) => key);
}

/** What the runs own, counted (and deleted when `remove`). */
function pruneRuns(state: MemoryState, runs: readonly Run[], remove: boolean): PruneCounts {
  const counts = noPruneCounts();
  const ids = new Set(runs.map((run) => run.id));
  counts.runs = runs.length;
  for (const run of runs) {
    counts.stageRecords += state.stages.get(run.id)?.length ?? 0;
    counts.attempts += state.failedAttempts.get(run.id)?.length ?? 0;
    if (!remove) continue;
    state.deleteRun(run);
    state.stages.delete(run.id);
    state.failedAttempts.delete(run.id);
    if (run.idempotencyKey !== null && state.runKeys.get(pairKey(run.pipeline, run.idempotencyKey)) === run.id) {
      state.runKeys.delete(pairKey(run.pipeline, run.idempotencyKey));
    }
  }
  for (const [key, entry] of state.ledger) {
    if (!ids.has(entry.runId)) continue;
    counts.ledgerEntries += 1;
    if (remove) state.ledger.delete(key);
  }
  for (const [id, job] of state.jobs) {
    if (!ids.has(job.runId)) continue;
    counts.jobs += 1;
    if (remove) state.deleteJob(id);
  }
  if (remove) {
    for (const [jobId, runId] of state.jobRunIds) if (ids.has(runId)) state.jobRunIds.delete(jobId);
  }
  return counts;
}

/** Deletes at most `limit` expired runs and `limit` expired request records. */
function prune(state: MemoryState, policy: RetentionPolicy, limit: number): PruneCounts {
  const counts = pruneRuns(state, expiredRuns(state, policy, limit), true);
  const requests = expiredRequests(state, policy, limit);
  for (const key of requests) state.requestRecords.delete(key);
  counts.requests = requests.length;
  return counts;
}

/** What pruning until nothing is left would delete. */
function count(state: MemoryState, policy: RetentionPolicy): PruneCounts {
  const counts = pruneRuns(state, expiredRuns(state, policy, Infinity), false);
  counts.requests = expiredRequests(state, policy, Infinity).length;
  return counts;
}

/** Retention of the state. */
export function createRetentionPort(ctx: MemoryContext): RetentionPort {
  const { state } = ctx;
  return {
    prune: ctx.atomic((policy, limit) => prune(state, policy, limit)),
    count: ctx.atomic((policy) => count(state, policy)),
  };
}
