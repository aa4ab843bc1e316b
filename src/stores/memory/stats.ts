/**
 * The `stats` sub-port of the memory store: recorded queue activity per queue and minute, the
 * ages of ready jobs and dead letters by error code, counted from the state's maps into the rows
 * the SQL stores count, then assembled by the same shared code.
 */
import { JobKind, JobState, RunStatus } from '../../core/model.ts';
import type { ActivitySample, DeadLetterGroup, QueueActivityQuery, QueueActivityReport, StatsPort } from '../../core/ports/stats.ts';
import { ACTIVITY_RETENTION_MS, activityMinute, activityWindow, jobAgeBucket } from '../../core/ports/stats.ts';
import { activityReport, deadLetterGroupsFromRows, sumSamples, type ActivityCountRow, type BucketCountRow, type DeadLetterGroupRow } from '../shared/activity.ts';
import type { MemoryContext } from './context.ts';
import { deleteWhere, type MemoryState } from './state.ts';

/** Adds the samples to the current minute and drops the minutes past retention. */
function recordActivity(state: MemoryState, samples: readonly ActivitySample[]): void {
  const sums = sumSamples(samples);
  if (sums.length === 0) return;
  const now = state.clock.now();
  const minuteAt = activityMinute(now);
  for (const s of sums) {
    const key = `${minuteAt}\0${s.queue}`;
    const row = state.queueActivity.get(key) ?? { minuteAt, queue: s.queue, completed: 0, failed: 0 };
    row.completed += s.completed;
    row.failed += s.failed;
    state.queueActivity.set(key, row);
  }
  const oldest = activityMinute(now - ACTIVITY_RETENTION_MS);
  deleteWhere(state.queueActivity, (row) => row.minuteAt < oldest);
}

/** Recorded completions and failures per queue and bucket, and the ages of the jobs ready now. */
function queueActivity(state: MemoryState, query: QueueActivityQuery): QueueActivityReport {
  const now = state.clock.now();
  const window = activityWindow(now, query);
  const activity: ActivityCountRow[] = [...state.queueActivity.values()]
    .filter((row) => row.minuteAt >= window.from)
    .map((row) => ({ queue: row.queue, bucket: Math.floor((row.minuteAt - window.from) / window.bucketMs), completed: row.completed, failed: row.failed }));
  const ready = new Map<string, BucketCountRow>();
  for (const job of state.jobs.values()) {
    if (job.state !== JobState.ready || job.availableAt > now) continue;
    const bucket = jobAgeBucket(now - job.availableAt);
    const key = `${job.queue}\0${bucket}`;
    const row = ready.get(key) ?? { queue: job.queue, bucket, n: 0 };
    row.n += 1;
    ready.set(key, row);
  }
  return activityReport(window, now, { activity, readyAges: [...ready.values()] });
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
    recordActivity: ctx.atomic((samples) => recordActivity(state, samples)),
    queueActivity: ctx.atomic((query) => queueActivity(state, query)),
    deadLetterGroups: ctx.atomic(() => deadLetterGroups(state)),
  };
}
