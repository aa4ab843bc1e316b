/**
 * The SQL of the `stats` sub-port: queue activity over a window of buckets and dead letters by
 * error code. Nothing here writes. The window statements walk an index from the window's start
 * (ledger_completed, failed_attempts_time, migration 0006) and read the index alone.
 */
import { ageBucketSql, type BucketCountRow } from '../../shared/activity.ts';
import type { SqliteDatabase } from '../connection.ts';

/**
 * In: window start, bucket width. Out: completions (ledger entries) per queue and bucket since
 * `from`. (Numbers are bound as REAL, hence the CAST: the times are never before `from`, so
 * truncation is the floor.)
 */
export const COUNT_COMPLETIONS = `
  SELECT queue, CAST((completed_at - @from) / @bucket_ms AS INTEGER) AS bucket, count(*) AS n
  FROM ledger WHERE completed_at >= @from GROUP BY queue, bucket`;

/** In: window start, bucket width. Out: failed attempts per queue and bucket since `from`. */
export const COUNT_FAILURES = `
  SELECT queue, CAST((failed_at - @from) / @bucket_ms AS INTEGER) AS bucket, count(*) AS n
  FROM failed_attempts WHERE failed_at >= @from GROUP BY queue, bucket`;

/** In: now. Out: jobs ready now per queue and age bucket (age since available), from jobs_ready alone. */
export const COUNT_READY_AGES = `
  SELECT queue, ${ageBucketSql('(@now - available_at)')} AS bucket, count(*) AS n
  FROM jobs WHERE state = 'ready' AND available_at <= @now GROUP BY queue, bucket`;

/**
 * Out: per last-error code of the dead stage jobs of dead_lettered runs: count, the queues (a JSON
 * array), the newest job's id and (bare columns of the max() row, a SQLite rule) its class and
 * message.
 */
export const DEAD_LETTER_GROUPS = `
  SELECT j.last_error ->> '$.code' AS code, count(*) AS count, json_group_array(DISTINCT j.queue) AS queues,
    max(j.id) AS latest_job_id, j.last_error ->> '$.class' AS error_class, j.last_error ->> '$.message' AS message
  FROM jobs j JOIN runs r ON r.id = j.run_id
  WHERE j.state = 'dead' AND j.kind = 'stage' AND r.status = 'dead_lettered'
  GROUP BY code`;

/** A row of {@link DEAD_LETTER_GROUPS}: `queues` as JSON text. */
export interface DeadLetterGroupTextRow {
  code: string;
  count: number;
  queues: string;
  latest_job_id: string;
  error_class: string;
  message: string;
}

type WindowParams = { from: number; bucket_ms: number };

/** Prepares the statements of the `stats` sub-port; the schema must be migrated first. */
export function prepareStatsStatements(db: SqliteDatabase) {
  return {
    countCompletions: db.prepare<WindowParams, BucketCountRow>(COUNT_COMPLETIONS),
    countFailures: db.prepare<WindowParams, BucketCountRow>(COUNT_FAILURES),
    countReadyAges: db.prepare<{ now: number }, BucketCountRow>(COUNT_READY_AGES),
    deadLetterGroups: db.prepare<[], DeadLetterGroupTextRow>(DEAD_LETTER_GROUPS),
  };
}
