/**
 * Statements of the `stats` sub-port: queue activity over a window of buckets and dead letters by
 * error code. Nothing here writes. The activity query is ad hoc (unnamed), so each run is planned
 * for its own window start and walks ledger_completed and failed_attempts_time (migration 0011)
 * from there, instead of a generic plan that cannot know how recent the window is.
 */
import { ageBucketSql } from '../../shared/activity.ts';
import { statement, type Statement } from '../database.ts';

/**
 * In: window start ($1), bucket width ($2), now ($3). Out: rows (kind, queue, bucket, n): `completed`
 * (ledger entries) and `failed` (failed attempts) per queue and window bucket since the start,
 * `ready` (jobs ready now) per queue and age bucket. One statement: one snapshot.
 */
export const queueActivity = (s: string): string => `
SELECT 'completed' AS kind, queue, ((completed_at - $1::bigint) / $2::bigint)::int AS bucket, count(*)::int AS n
  FROM ${s}.ledger WHERE completed_at >= $1::bigint GROUP BY queue, bucket
UNION ALL
SELECT 'failed', queue, ((failed_at - $1::bigint) / $2::bigint)::int, count(*)::int
  FROM ${s}.failed_attempts WHERE failed_at >= $1::bigint GROUP BY queue, 3
UNION ALL
SELECT 'ready', queue, ${ageBucketSql('($3::bigint - available_at)')}, count(*)::int
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
