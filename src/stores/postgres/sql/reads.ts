/**
 * Statements of the `reads` sub-port: runs, jobs, queue stats and the ledger. Nothing here writes.
 * Each export builds one statement for a schema `s` (quoted), or, for listings whose text varies
 * with the filters given, a function from those filters' WHERE clause to the text.
 */
import { nowFrom, statement, type ListingText, type Statement } from '../database.ts';

/** "Now" in every statement that needs it: `$1`, or the database clock when `$1` is NULL. */
const NOW = nowFrom(1);

/**
 * Runs matching the filters, newest first (ids sort by creation time). Only the conditions that
 * apply are in the text, so the planner can use the partial runs_status index for the statuses it
 * holds, walk runs_subject_id within one subject or runs_tenant within one tenant (migration
 * 0012), and seek the primary key to the id range of a creation-time window.
 */
export const listRuns =
  (s: string): ListingText =>
  (where, limitParam) =>
    `SELECT * FROM ${s}.runs ${where} ORDER BY id DESC LIMIT $${limitParam}`;

/** Jobs matching the filters, oldest first. */
export const listJobs =
  (s: string): ListingText =>
  (where, limitParam) =>
    `SELECT * FROM ${s}.jobs ${where} ORDER BY enqueued_at, id LIMIT $${limitParam}`;

/**
 * In: run id. Out: the run and its stage records as read (leases from the live jobs, migration
 * 0020) in pipeline order (one snapshot, JSON rows).
 */
export const getRun = (s: string): Statement =>
  statement(
    'get_run',
    `SELECT row_to_json(r) AS run,
       (SELECT coalesce(json_agg(st ORDER BY st.stage_index), '[]'::json) FROM ${s}.stage_records_live st WHERE st.run_id = r.id) AS stages
     FROM ${s}.runs r WHERE r.id = $1`,
  );

/** In: id. Out: the job row or nothing. */
export const getJob = (s: string): Statement => statement('get_job', `SELECT * FROM ${s}.jobs WHERE id = $1`);

/**
 * The dead stage jobs of dead_lettered runs, newest first (filters: code, queue, id cursor, on
 * alias `j`). The fixed conditions sit in the join, so `where` may add to them.
 */
export const listDeadLetters =
  (s: string): ListingText =>
  (where, limitParam) =>
    `SELECT j.* FROM ${s}.jobs j JOIN ${s}.runs r
       ON r.id = j.run_id AND r.status = 'dead_lettered' AND j.state = 'dead' AND j.kind = 'stage'
     ${where} ORDER BY j.id DESC LIMIT $${limitParam}`;

/** In: run id. Out: its failed attempts in commit order (failed_attempts, migration 0013). */
export const listAttempts = (s: string): Statement =>
  statement('list_attempts', `SELECT * FROM ${s}.failed_attempts WHERE run_id = $1 ORDER BY seq`);

/** In: run id. Out: its ledger entries in completion order. */
export const readLedger = (s: string): Statement => statement('read_ledger', `SELECT * FROM ${s}.ledger WHERE run_id = $1 ORDER BY seq`);

/** In: now. Out: per queue with jobs or a pause flag: counts by state and the oldest ready age. */
export const queueStats = (s: string): Statement =>
  statement(
    'queue_stats',
    `
WITH counts AS (
  SELECT queue,
    count(*) FILTER (WHERE state = 'ready' AND available_at <= ${NOW})::int AS ready,
    count(*) FILTER (WHERE state = 'ready' AND available_at > ${NOW})::int AS scheduled,
    count(*) FILTER (WHERE state = 'leased')::int AS leased,
    count(*) FILTER (WHERE state = 'parked')::int AS parked,
    count(*) FILTER (WHERE state = 'dead')::int AS dead,
    -- Age since the job could first run, so a backoff does not count as queueing delay.
    ${NOW} - min(available_at) FILTER (WHERE state = 'ready' AND available_at <= ${NOW}) AS oldest_ready_age_ms
  FROM ${s}.jobs GROUP BY queue
)
SELECT coalesce(c.queue, q.name) AS queue, coalesce(q.paused, false) AS paused,
  coalesce(c.ready, 0) AS ready, coalesce(c.scheduled, 0) AS scheduled, coalesce(c.leased, 0) AS leased,
  coalesce(c.parked, 0) AS parked, coalesce(c.dead, 0) AS dead, c.oldest_ready_age_ms
FROM counts c FULL JOIN ${s}.queues q ON q.name = c.queue`,
  );
