/**
 * The `stats` sub-port of the memory store: queue activity over a window and dead letters by
 * error code, counted from the state's maps (the ledger for completions, the failure history for
 * failed attempts, the jobs for ages and dead letters) into the rows the SQL stores count, then
 * assembled by the same shared code.
 */
import { JobKind, JobState, RunStatus } from '../../core/model.ts';
import { queueName } from '../../core/pipeline/define-pipeline.ts';
import type { DeadLetterGroup, QueueActivityQuery, QueueActivityReport, StatsPort } from '../../core/ports/stats.ts';
import { jobAgeBucket } from '../../core/ports/stats.ts';
import { activityReport, activityWindow, deadLetterGroupsFromRows, type BucketCountRow, type DeadLetterGroupRow } from '../shared/activity.ts';
import type { MemoryContext } from './context.ts';
import type { MemoryState } from './state.ts';

/** Counts `(queue, bucket)` pairs into rows. */
function countRows(pairs: Iterable<readonly [queue: string, bucket: number]>): BucketCountRow[] {
  const counts = new Map<string, BucketCountRow>();
  for (const [queue, bucket] of pairs) {
    const key = `${queue}\0${bucket}`;
    const row = counts.get(key);
    if (row) row.n += 1;
    else counts.set(key, { queue, bucket, n: 1 });
  }
  return [...counts.values()];
}

/** Completions and failures per queue and bucket, and the ages of the jobs ready now. */
function queueActivity(state: MemoryState, query: QueueActivityQuery): QueueActivityReport {
  const now = state.clock.now();
  const window = activityWindow(now, query);
  const bucketOf = (time: number): number => Math.floor((time - window.from) / window.bucketMs);
  const completed = [...state.ledger.values()].flatMap((entry) => {
    const run = state.runs.get(entry.runId);
    return entry.completedAt >= window.from && run ? [[queueName(run.pipeline, entry.stage), bucketOf(entry.completedAt)] as const] : [];
  });
  const failed = [...state.failedAttempts.values()].flatMap((history) =>
    history.filter((a) => a.failedAt >= window.from).map((a) => [a.queue, bucketOf(a.failedAt)] as const),
  );
  const ready = [...state.jobs.values()]
    .filter((job) => job.state === JobState.ready && job.availableAt <= now)
    .map((job) => [job.queue, jobAgeBucket(now - job.availableAt)] as const);
  return activityReport(window, now, { completed: countRows(completed), failed: countRows(failed), readyAges: countRows(ready) });
}

/** Dead stage jobs of dead-lettered runs, grouped by their last error's code. */
function deadLetterGroups(state: MemoryState): DeadLetterGroup[] {
  const groups = new Map<string, DeadLetterGroupRow & { queueSet: Set<string> }>();
  for (const job of state.jobs.values()) {
    const error = job.lastError;
    if (job.state !== JobState.dead || job.kind !== JobKind.stage || error === null) continue;
    if (state.runs.get(job.runId)?.status !== RunStatus.dead_lettered) continue;
    const group = groups.get(error.code);
    if (!group) {
      const queueSet = new Set([job.queue]);
      groups.set(error.code, { code: error.code, error_class: error.class, message: error.message, count: 1, queues: [], latest_job_id: job.id, queueSet });
      continue;
    }
    group.count += 1;
    group.queueSet.add(job.queue);
    if (job.id > group.latest_job_id) Object.assign(group, { latest_job_id: job.id, error_class: error.class, message: error.message });
  }
  return deadLetterGroupsFromRows([...groups.values()].map((g) => ({ ...g, queues: [...g.queueSet] })));
}

/** The aggregates of the state. */
export function createStatsPort(ctx: MemoryContext): StatsPort {
  const { state } = ctx;
  return {
    queueActivity: ctx.atomic((query) => queueActivity(state, query)),
    deadLetterGroups: ctx.atomic(() => deadLetterGroups(state)),
  };
}
