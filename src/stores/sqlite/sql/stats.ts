/**
 * The SQL of the `stats` sub-port: recorded queue activity (queue_activity, migration 0008), ages
 * of ready jobs and dead letters by error code. Only `RECORD_ACTIVITY` and `PRUNE_ACTIVITY` write,
 * in a transaction of their own (never a commit's).
 */
import { ageBucketSql, type ActivityCountRow, type BucketCountRow } from '../../shared/activity.ts';
import type { SqliteDatabase } from '../connection.ts';

/**
 * In: the minute's start, a JSON array of `{queue, completed, failed}`. Adds each sample to its
 * queue's row of that minute (created at zero). `WHERE true` lets SQLite parse the upsert after a SELECT.
 */
export const RECORD_ACTIVITY = `
  INSERT INTO queue_activity (minute_at, queue, completed, failed)
  SELECT @minute_at, s.value ->> '$.queue', s.value ->> '$.completed', s.value ->> '$.failed' FROM json_each(@samples) s WHERE true
  ON CONFLICT (minute_at, queue) DO UPDATE SET completed = completed + excluded.completed, failed = failed + excluded.failed`;

/** In: the oldest minute to keep. Deletes older minutes (one range of the primary key). */
export const PRUNE_ACTIVITY = 'DELETE FROM queue_activity WHERE minute_at < ?';

/**
 * In: window start, bucket width (a whole number of minutes). Out: recorded completions and
 * failures per queue and window bucket since `from`, from one range of the primary key. (Numbers
 * are bound as REAL, hence the CAST; minutes are never before `from`, so truncation is the floor.)
 */
export const COUNT_ACTIVITY = `
  SELECT queue, CAST((minute_at - @from) / @bucket_ms AS INTEGER) AS bucket, sum(completed) AS completed, sum(failed) AS failed
  FROM queue_activity WHERE minute_at >= @from GROUP BY queue, bucket`;

/** In: now. Out: jobs ready now per queue and age bucket (age since available), from jobs_ready_tenant alone. */
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

/** Prepares the statements of the `stats` sub-port; the schema must be migrated first. */
export function prepareStatsStatements(db: SqliteDatabase) {
  return {
    recordActivity: db.prepare<{ minute_at: number; samples: string }>(RECORD_ACTIVITY),
    pruneActivity: db.prepare<[number]>(PRUNE_ACTIVITY),
    countActivity: db.prepare<{ from: number; bucket_ms: number }, ActivityCountRow>(COUNT_ACTIVITY),
    countReadyAges: db.prepare<{ now: number }, BucketCountRow>(COUNT_READY_AGES),
    deadLetterGroups: db.prepare<[], DeadLetterGroupTextRow>(DEAD_LETTER_GROUPS),
  };
}
