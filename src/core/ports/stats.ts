/**
 * The `stats` sub-port: aggregates an operator looks at (the dashboard, alerts): what each queue
 * did over the last minutes, how old its waiting jobs are, and dead letters by error code. Nothing
 * here changes the store; each method is one consistent read whose cost is bounded by the window
 * asked for, not by the store's history.
 */
import type { ErrorClass } from '../errors.ts';

/**
 * Upper bounds (exclusive) of the job-age buckets of {@link QueueActivity.readyAges}: under 1 s,
 * 1-10 s, 10 s-1 min, 1-10 min, 10 min-1 h, and the last bucket 1 h or more.
 */
export const JOB_AGE_BOUNDS_MS: readonly number[] = [1_000, 10_000, 60_000, 600_000, 3_600_000];

/** Which window {@link StatsPort.queueActivity} counts over. */
export interface QueueActivityQuery {
  /** Width of one bucket, at least 1 ms. */
  bucketMs: number;
  /** Number of buckets, at least 1; the last one holds now. */
  buckets: number;
}

/** What one queue did in the window, bucket by bucket (oldest first). */
export interface QueueActivity {
  queue: string;
  /** Jobs completed (ledger entries: stage and rollback jobs) per bucket. */
  completed: number[];
  /** Failed attempts (any decision: retry, park, dead-letter, fail) per bucket. */
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

/** Operator aggregates; each method is one consistent read on the store clock. */
export interface StatsPort {
  /**
   * Completions and failed attempts per queue in `query.buckets` buckets of `query.bucketMs`
   * aligned to multiples of `bucketMs` (the last bucket holds now, so it is partial), and the age
   * distribution of the jobs ready now.
   */
  queueActivity(query: QueueActivityQuery): Promise<QueueActivityReport>;
  /** Dead letters grouped by their last error's code, the largest group first (then by code). */
  deadLetterGroups(): Promise<DeadLetterGroup[]>;
}

/** The first bucket's start for `query` at `now`: buckets are aligned to multiples of `bucketMs`. */
export function activityWindowStart(now: number, query: QueueActivityQuery): number {
  const bucketMs = Math.max(1, Math.floor(query.bucketMs));
  const buckets = Math.max(1, Math.floor(query.buckets));
  return (Math.floor(now / bucketMs) - (buckets - 1)) * bucketMs;
}

/** The bucket of {@link JOB_AGE_BOUNDS_MS} that an age falls in. */
export function jobAgeBucket(ageMs: number): number {
  const index = JOB_AGE_BOUNDS_MS.findIndex((bound) => ageMs < bound);
  return index === -1 ? JOB_AGE_BOUNDS_MS.length : index;
}
