/**
 * The `stats` sub-port as every store builds it: the age-bucket expression both SQL dialects
 * accept, samples summed per queue, and the assembly of counted rows into a
 * {@link QueueActivityReport} and a list of {@link DeadLetterGroup}s, so the stores agree on order
 * and shape.
 *
 * Driver-free: every store uses it.
 */
import type { ErrorClass } from '../../core/errors.ts';
import type { ActivitySample, DeadLetterGroup, QueueActivity, QueueActivityReport } from '../../core/ports/stats.ts';
import { JOB_AGE_BOUNDS_MS } from '../../core/ports/stats.ts';

/**
 * A CASE expression giving the bucket of {@link JOB_AGE_BOUNDS_MS} that `ageExpr` (ms) falls in;
 * the bounds are literals, so the text is the same for every call.
 */
export function ageBucketSql(ageExpr: string): string {
  const whens = JOB_AGE_BOUNDS_MS.map((bound, i) => `WHEN ${ageExpr} < ${bound} THEN ${i}`).join(' ');
  return `CASE ${whens} ELSE ${JOB_AGE_BOUNDS_MS.length} END`;
}

/** Ready jobs of `queue` in age bucket `bucket`. */
export interface BucketCountRow {
  queue: string;
  bucket: number;
  n: number;
}

/** Recorded activity of `queue` in window bucket `bucket` (summed over its minutes). */
export interface ActivityCountRow {
  queue: string;
  bucket: number;
  completed: number;
  failed: number;
}

/** Code-point order, as every store lists names. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The report from counted rows: recorded completions and failures by window bucket, ready jobs by
 * age bucket. Rows with a bucket outside the range are ignored (a clock that stepped back).
 */
export function activityReport(
  window: { from: number; bucketMs: number; buckets: number },
  now: number,
  rows: { activity: readonly ActivityCountRow[]; readyAges: readonly BucketCountRow[] },
): QueueActivityReport {
  const byQueue = new Map<string, QueueActivity>();
  const of = (queue: string): QueueActivity => {
    let activity = byQueue.get(queue);
    if (!activity) {
      activity = {
        queue,
        completed: Array<number>(window.buckets).fill(0),
        failed: Array<number>(window.buckets).fill(0),
        readyAges: Array<number>(JOB_AGE_BOUNDS_MS.length + 1).fill(0),
      };
      byQueue.set(queue, activity);
    }
    return activity;
  };
  const add = (counts: number[], bucket: number, n: number): void => {
    if (Number.isInteger(bucket) && bucket >= 0 && bucket < counts.length) counts[bucket] = (counts[bucket] ?? 0) + Number(n);
  };
  for (const row of rows.activity) {
    const activity = of(row.queue);
    add(activity.completed, row.bucket, row.completed);
    add(activity.failed, row.bucket, row.failed);
  }
  for (const row of rows.readyAges) add(of(row.queue).readyAges, row.bucket, row.n);
  const queues = [...byQueue.values()].sort((a, b) => compareNames(a.queue, b.queue));
  return { from: window.from, bucketMs: window.bucketMs, now, queues };
}

/** The samples with their counts summed per queue, in queue order; queues with nothing to add left out. */
export function sumSamples(samples: readonly ActivitySample[]): ActivitySample[] {
  const byQueue = new Map<string, ActivitySample>();
  for (const s of samples) {
    const sum = byQueue.get(s.queue) ?? { queue: s.queue, completed: 0, failed: 0 };
    sum.completed += Math.max(0, Math.floor(s.completed));
    sum.failed += Math.max(0, Math.floor(s.failed));
    byQueue.set(s.queue, sum);
  }
  return [...byQueue.values()].filter((s) => s.completed + s.failed > 0).sort((a, b) => compareNames(a.queue, b.queue));
}

/** One row per error code, as the SQL stores count dead letters. */
export interface DeadLetterGroupRow {
  code: string;
  error_class: ErrorClass;
  message: string;
  count: number;
  queues: readonly string[];
  latest_job_id: string;
}

/** Rows -> groups, the largest first, then by code; queues by name. */
export function deadLetterGroupsFromRows(rows: readonly DeadLetterGroupRow[]): DeadLetterGroup[] {
  return rows
    .map((row): DeadLetterGroup => ({
      code: row.code,
      errorClass: row.error_class,
      message: row.message,
      count: Number(row.count),
      queues: [...row.queues].sort(compareNames),
      latestJobId: row.latest_job_id,
    }))
    .sort((a, b) => b.count - a.count || compareNames(a.code, b.code));
}
