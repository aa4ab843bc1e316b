/**
 * The `stats` sub-port's results as the SQL stores build them: the age-bucket expression both
 * dialects accept, and the assembly of counted rows into a {@link QueueActivityReport} and a
 * list of {@link DeadLetterGroup}s, so both stores agree on order and shape.
 *
 * Driver-free: SQLite and PostgreSQL both use it.
 */
import type { ErrorClass } from '../../core/errors.ts';
import type { DeadLetterGroup, QueueActivity, QueueActivityQuery, QueueActivityReport } from '../../core/ports/stats.ts';
import { activityWindowStart, JOB_AGE_BOUNDS_MS } from '../../core/ports/stats.ts';

/**
 * A CASE expression giving the bucket of {@link JOB_AGE_BOUNDS_MS} that `ageExpr` (ms) falls in;
 * the bounds are literals, so the text is the same for every call.
 */
export function ageBucketSql(ageExpr: string): string {
  const whens = JOB_AGE_BOUNDS_MS.map((bound, i) => `WHEN ${ageExpr} < ${bound} THEN ${i}`).join(' ');
  return `CASE ${whens} ELSE ${JOB_AGE_BOUNDS_MS.length} END`;
}

/** The window a query counts over: its start, bucket width and bucket count, sanitised. */
export function activityWindow(now: number, query: QueueActivityQuery): { from: number; bucketMs: number; buckets: number } {
  return { from: activityWindowStart(now, query), bucketMs: Math.max(1, Math.floor(query.bucketMs)), buckets: Math.max(1, Math.floor(query.buckets)) };
}

/** One counted row: how many things of `queue` fell in `bucket`. */
export interface BucketCountRow {
  queue: string;
  bucket: number;
  n: number;
}

/** Code-point order, as every store lists names. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The report from counted rows: completions and failures by window bucket, ready jobs by age
 * bucket. Rows with a bucket outside the range are ignored (a clock that stepped back).
 */
export function activityReport(
  window: { from: number; bucketMs: number; buckets: number },
  now: number,
  rows: { completed: readonly BucketCountRow[]; failed: readonly BucketCountRow[]; readyAges: readonly BucketCountRow[] },
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
  const add = (list: readonly BucketCountRow[], field: 'completed' | 'failed' | 'readyAges'): void => {
    for (const row of list) {
      const counts = of(row.queue)[field];
      if (Number.isInteger(row.bucket) && row.bucket >= 0 && row.bucket < counts.length) counts[row.bucket] = (counts[row.bucket] ?? 0) + Number(row.n);
    }
  };
  add(rows.completed, 'completed');
  add(rows.failed, 'failed');
  add(rows.readyAges, 'readyAges');
  const queues = [...byQueue.values()].sort((a, b) => compareNames(a.queue, b.queue));
  return { from: window.from, bucketMs: window.bucketMs, now, queues };
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
