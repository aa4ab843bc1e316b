/**
 * Statements of the `stats` sub-port: recorded queue activity (queue_activity, migration 0013),
 * ages of ready jobs and dead letters by error code. Only `recordActivity` writes, as a statement
 * of its own (never inside a commit).
 */
import { ageBucketSql } from '../../shared/activity.ts';
import { nowFrom, statement, type Statement } from '../database.ts';

/** "Now" in every statement that needs it: `$1`, or the database clock when `$1` is NULL. */
const NOW = nowFrom(1);

/**
 * In: now, a JSON array of `{queue, completed, failed}` (summed per queue, in queue order, so
 * concurrent reporters lock rows in one order), retention ms. Adds each sample to its queue's row
 * of the current minute (created at zero), and deletes the minutes older than the retention (a
 * data-modifying WITH runs to completion whether or not it is read).
 */
export const recordActivity = (s: string): Statement =>
  statement(
    'record_activity',
    `
WITH t AS (SELECT (${NOW} / 60000) * 60000 AS minute_at),
recorded AS (
  INSERT INTO ${s}.queue_activity AS a (minute_at, queue, completed, failed)
  SELECT t.minute_at, x.queue, x.completed, x.failed FROM t, json_to_recordset($2::json) AS x (queue text, completed bigint, failed bigint)
  ON CONFLICT (minute_at, queue) DO UPDATE SET completed = a.completed + excluded.completed, failed = a.failed + excluded.failed
)
DELETE FROM ${s}.queue_activity WHERE minute_at < (SELECT minute_at FROM t) - $3::bigint`,
  );

/**
 * In: window start ($1), bucket width ($2), now ($3). Out: rows (kind, queue, bucket, completed,
 * failed, n): `activity` per queue and window bucket (one range of queue_activity's key), `ready`
 * (jobs ready now) per queue and age bucket. Ad hoc, so each run is planned for its window.
 */
export const queueActivity = (s: string): string => `
SELECT 'activity' AS kind, queue, ((minute_at - $1::bigint) / $2::bigint)::int AS bucket,
  sum(completed)::bigint AS completed, sum(failed)::bigint AS failed, 0::bigint AS n
  FROM ${s}.queue_activity WHERE minute_at >= $1::bigint GROUP BY queue, 3
UNION ALL
SELECT 'ready', queue, ${ageBucketSql('($3::bigint - available_at)')}, 0, 0, count(*)
  FROM ${s}.jobs WHERE state = 'ready' AND available_at <= $3::bigint GROUP BY queue, 3`;

/**
 * Out: per last-error code of the dead stage jobs of dead_lettered runs: count, the queues, the
 * newest job's id and that job's error class and message.
 */
export const deadLetterGroups = (s: string): Statement =>
  statement(
    'dead_letter_groups',
    `SELECT j.last_error ->> 'code' AS code, count(*)::int AS count, array_agg(DISTINCT j.queue) AS queues,
       max(j.id) AS latest_job_id,
       (array_agg(j.last_error ->> 'class' ORDER BY j.id DESC))[1] AS error_class,
       (array_agg(j.last_error ->> 'message' ORDER BY j.id DESC))[1] AS message
     FROM ${s}.jobs j JOIN ${s}.runs r ON r.id = j.run_id
     WHERE j.state = 'dead' AND j.kind = 'stage' AND r.status = 'dead_lettered'
     GROUP BY 1`,
  );
