/**
 * The `stats` sub-port: aggregates an operator looks at (the dashboard, alerts): what each queue
 * did over the last minutes, how old its waiting jobs are, and dead letters by error code.
 * Throughput is counted off the job path: each worker adds up what it committed and reports the
 * counts every second or so (`recordActivity`, one small transaction), so a commit writes nothing
 * for it; the store keeps one row per queue and minute for a day. The reads cost what their window
 * holds, not what the store's history holds.
 */
import type { ErrorClass } from '../errors.ts';

/** The resolution of queue activity: counts are kept per queue and minute (store clock). */
export const ACTIVITY_MINUTE_MS = 60_000;

/** How long per-minute activity is kept; older minutes are removed when activity is recorded. */
export const ACTIVITY_RETENTION_MS = 24 * 60 * 60_000;

/** What a worker committed on one queue since its last report. */
export interface ActivitySample {
  queue: string;
  /** Jobs completed (stage and rollback jobs). */
  completed: number;
  /** Failed attempts committed (any decision: retry, park, dead-letter, fail). */
  failed: number;
}

/**
 * Upper bounds (exclusive) of the job-age buckets of {@link QueueActivity.readyAges}: under 1 s,
 * 1-10 s, 10 s-1 min, 1-10 min, 10 min-1 h, and the last bucket 1 h or more.
 */
export const JOB_AGE_BOUNDS_MS: readonly number[] = [1_000, 10_000, 60_000, 600_000, 3_600_000];

/** Which window {@link StatsPort.queueActivity} counts over: at most {@link ACTIVITY_RETENTION_MS}. */
export interface QueueActivityQuery {
  /** Width of one bucket in whole minutes, at least 1. */
  bucketMinutes: number;
  /** Number of buckets, at least 1; the last one holds now. */
  buckets: number;
}

/** What one queue did in the window, bucket by bucket (oldest first). */
export interface QueueActivity {
  queue: string;
  /** Jobs completed per bucket, as recorded (see {@link ActivitySample}). */
  completed: number[];
  /** Failed attempts per bucket, as recorded. */
  failed: number[];
  /**
   * Jobs ready now, by time since they became available, one count per bucket of
   * {@link JOB_AGE_BOUNDS_MS} (its length + 1 counts).
   */
  readyAges: number[];
}

/** Result of {@link StatsPort.queueActivity}. */
export interface QueueActivityReport {
  /** Start of the first bucket (epoch ms, store clock): bucket i is `[from + i*bucketMs, from + (i+1)*bucketMs)`. */
  from: number;
  bucketMs: number;
  /** The store's clock when it counted; inside the last bucket. */
  now: number;
  /** Queues with any activity in the window or any ready job, by name. */
  queues: QueueActivity[];
}

/** Dead letters (see `ReadsPort.listDeadLetters`) sharing one error code. */
export interface DeadLetterGroup {
  code: string;
  /** Class and message of the newest dead letter of the group. */
  errorClass: ErrorClass;
  message: string;
  count: number;
  /** The queues they are on, by name. */
  queues: string[];
  /** Id of the newest dead letter of the group. */
  latestJobId: string;
}

/** Operator aggregates; each method is one atomic unit on the store clock. */
export interface StatsPort {
  /**
   * Adds each sample's counts to its queue's current minute (store clock), and removes the minutes
   * older than {@link ACTIVITY_RETENTION_MS}. Samples of one queue add up. Counts are metrics: a
   * worker that dies loses the counts it had not reported yet, nothing else.
   */
  recordActivity(samples: readonly ActivitySample[]): Promise<void>;
  /**
   * Recorded completions and failed attempts per queue in `query.buckets` buckets of
   * `query.bucketMinutes` minutes, aligned to multiples of the bucket width (the last bucket holds
   * now, so it is partial), and the age distribution of the jobs ready now. A window longer than
   * the retention is cut to it (its first buckets count nothing).
   */
  queueActivity(query: QueueActivityQuery): Promise<QueueActivityReport>;
  /** Dead letters grouped by their last error's code, the largest group first (then by code). */
  deadLetterGroups(): Promise<DeadLetterGroup[]>;
}

/** The window of `query` at `now`: its first bucket's start, aligned to the bucket width, the width and the count. */
export function activityWindow(now: number, query: QueueActivityQuery): { from: number; bucketMs: number; buckets: number } {
  const bucketMs = Math.max(1, Math.floor(query.bucketMinutes)) * ACTIVITY_MINUTE_MS;
  const buckets = Math.max(1, Math.floor(query.buckets));
  return { from: (Math.floor(now / bucketMs) - (buckets - 1)) * bucketMs, bucketMs, buckets };
}

/** The start of the minute `now` falls in: the row a recorded sample adds to. */
export function activityMinute(now: number): number {
  return Math.floor(now / ACTIVITY_MINUTE_MS) * ACTIVITY_MINUTE_MS;
}

/** The bucket of {@link JOB_AGE_BOUNDS_MS} that an age falls in. */
export function jobAgeBucket(ageMs: number): number {
  const index = JOB_AGE_BOUNDS_MS.findIndex((bound) => ageMs < bound);
  return index === -1 ? JOB_AGE_BOUNDS_MS.length : index;
}
