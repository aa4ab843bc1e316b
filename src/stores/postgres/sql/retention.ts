/**
 * Statements of the `retention` sub-port: runs past their retention period (index runs_finished,
 * migration 0019) deleted with their child rows, and request records by age, each batch ONE
 * statement (data-modifying CTEs: one snapshot, one transaction; the foreign keys are checked at
 * its end, so children and runs go together).
 */
import { nowFrom, statement, type Statement } from '../database.ts';

/**
 * `r` prunable once its status and cutoff match: no job that is not dead, and not the highest
 * version of its subject (see `RetentionPort.prune`).
 */
const prunable = (s: string): string => `
  NOT EXISTS (SELECT 1 FROM ${s}.jobs j WHERE j.run_id = r.id AND j.state <> 'dead')
  AND (r.subject_id IS NULL OR EXISTS (
    SELECT 1 FROM ${s}.runs o
    WHERE o.pipeline = r.pipeline AND o.subject_id = r.subject_id AND o.subject_version > r.subject_version))`;

/**
 * The expired runs of each `(status, period)` pair of $1, $2 at `now` (a lateral walk of
 * runs_finished per status).
 */
const expired = (s: string, now: string, limit: string): string => `
  SELECT c.id, c.finished_at
  FROM unnest($1::text[], $2::bigint[]) AS p(status, period)
  CROSS JOIN LATERAL (
    SELECT r.id, r.finished_at FROM ${s}.runs r
    WHERE r.status = p.status AND r.finished_at IS NOT NULL AND r.finished_at <= ${now} - p.period AND ${prunable(s)}
    ORDER BY r.finished_at, r.id
    ${limit}) AS c`;

/**
 * In: $1 statuses, $2 their periods (ms), $3 limit, $4 the request period or null, $5 now (the
 * injected clock, or null for the database's). Deletes at most $3 expired runs (oldest finished
 * first; runs another transaction has locked are skipped) with their child rows, and at most $3
 * request records created at or before now - $4. Out: one row of counts.
 */
export const pruneExpired = (s: string): Statement =>
  statement(
    'prune_expired',
    `
WITH candidates AS (${expired(s, nowFrom(5), 'LIMIT $3')} ORDER BY c.finished_at, c.id LIMIT $3),
picked AS (
  SELECT r.id FROM ${s}.runs r JOIN candidates USING (id)
  WHERE r.status = ANY($1::text[]) AND r.finished_at IS NOT NULL
  FOR UPDATE OF r SKIP LOCKED
),
stages AS (DELETE FROM ${s}.stage_records WHERE run_id IN (SELECT id FROM picked) RETURNING 1),
ledger AS (DELETE FROM ${s}.ledger WHERE run_id IN (SELECT id FROM picked) RETURNING 1),
jobs AS (DELETE FROM ${s}.jobs WHERE run_id IN (SELECT id FROM picked) RETURNING 1),
attempts AS (DELETE FROM ${s}.failed_attempts WHERE run_id IN (SELECT id FROM picked) RETURNING 1),
retired AS (DELETE FROM ${s}.retired_jobs WHERE run_id IN (SELECT id FROM picked) RETURNING 1),
runs AS (DELETE FROM ${s}.runs WHERE id IN (SELECT id FROM picked) RETURNING 1),
requests AS (
  DELETE FROM ${s}.request_records WHERE (scope, key) IN (
    SELECT scope, key FROM ${s}.request_records WHERE created_at <= ${nowFrom(5)} - $4::bigint
    ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
  RETURNING 1
)
SELECT (SELECT count(*) FROM runs)::int AS runs,
  (SELECT count(*) FROM stages)::int AS stage_records,
  (SELECT count(*) FROM ledger)::int AS ledger_entries,
  (SELECT count(*) FROM jobs)::int AS jobs,
  (SELECT count(*) FROM attempts)::int AS attempts,
  (SELECT count(*) FROM requests)::int AS requests`,
  );

/**
 * In: $1 statuses, $2 their periods, $3 the request period or null, $4 now or null. Out: one row:
 * what pruning until nothing is left deletes.
 */
export const countExpired = (s: string): Statement =>
  statement(
    'count_expired',
    `
WITH candidates AS (${expired(s, nowFrom(4), '')})
SELECT count(*)::int AS runs,
  (SELECT count(*) FROM ${s}.stage_records WHERE run_id IN (SELECT id FROM candidates))::int AS stage_records,
  (SELECT count(*) FROM ${s}.ledger WHERE run_id IN (SELECT id FROM candidates))::int AS ledger_entries,
  (SELECT count(*) FROM ${s}.jobs WHERE run_id IN (SELECT id FROM candidates))::int AS jobs,
  (SELECT count(*) FROM ${s}.failed_attempts WHERE run_id IN (SELECT id FROM candidates))::int AS attempts,
  (SELECT count(*) FROM ${s}.request_records WHERE created_at <= ${nowFrom(4)} - $3::bigint)::int AS requests
FROM candidates`,
  );
