/**
 * Statements on runs and stage records: submission, ending runs early (cancel, supersede,
 * drain), operator restarts, and run reads. Each export builds one statement for a schema `s`
 * (quoted); its header says what goes in, what comes out and the invariant it keeps. `$1` is
 * always "now" where a statement needs the time.
 */
import { nowFrom, statement, type Statement } from '../database.ts';

/** "Now" in every statement that needs it: `$1`, or the database clock when `$1` is NULL. */
const NOW = nowFrom(1);

/**
 * In: now, the run's columns ($2..$14), finished ($15: finished_at = now), the status of its
 * stage records ($16) and their names in order ($17), and the first job ($18 id or NULL for
 * none, $19 stage, $20 queue, $21 kind, $22 key, $23 max attempts, $24 priority), the NOTIFY
 * channel ($25). Out: the new run, or nothing when a run of the pipeline already holds the
 * idempotency key (ON CONFLICT waits for a concurrent holder to commit first). One statement:
 * run, stage records, job and wake-up commit together.
 */
export const insertRun = (s: string): Statement =>
  statement(
    'insert_run',
    `
WITH new_run AS (
  INSERT INTO ${s}.runs (id, pipeline, pipeline_version, status, current_stage, input, input_checksum, idempotency_key,
    subject_id, subject_version, tenant, trace_id, error, created_at, updated_at, finished_at)
  VALUES ($2, $3, $4, $5, $6, $7::json, $8, $9, $10, $11, $12, $13, $14::json, ${NOW}, ${NOW}, CASE WHEN $15 THEN ${NOW} END)
  ON CONFLICT (pipeline, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING *
),
stages AS (
  INSERT INTO ${s}.stage_records (run_id, stage, stage_index, status)
  SELECT r.id, st.stage, st.ord - 1, $16 FROM new_run r, unnest($17::text[]) WITH ORDINALITY AS st (stage, ord)
),
job AS (
  INSERT INTO ${s}.jobs (id, run_id, pipeline, stage, queue, kind, state, idempotency_key, max_attempts, priority,
    available_at, enqueued_at, tenant, trace_id)
  SELECT $18, r.id, r.pipeline, $19, $20, $21, 'ready', $22, $23, $24, ${NOW}, ${NOW}, r.tenant, r.trace_id
  FROM new_run r WHERE $18::text IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING queue
),
woken AS (SELECT pg_notify($25, queue) FROM job)
SELECT r.*, (SELECT count(*) FROM woken)::int AS woken FROM new_run r`,
  );

/**
 * In: now, requests JSON (submit_request objects, none with a subject), NOTIFY channel.
 * Out: one (ord, created, run JSON) row per request, in order. `submit_runs` (migration 0005)
 * creates the batch's runs, stage records and first jobs set-wise, all or nothing: a key reused
 * with another input raises SQLSTATE KL409 and the statement stores nothing.
 */
export const submitRuns = (s: string): Statement =>
  statement(
    'submit_runs',
    `SELECT r.ord, r.created, r.run FROM ${s}.submit_runs($2::json, $1::bigint, $3) AS r ORDER BY r.ord`,
  );

/** In: pipeline, idempotency key. Out: the run submitted with that key (unique per pipeline). */
export const selectRunByKey = (s: string): Statement =>
  statement('select_run_by_key', `SELECT * FROM ${s}.runs WHERE pipeline = $1 AND idempotency_key = $2`);

/**
 * In: lock key texts. Takes each one's transaction-scoped advisory lock, in sorted order (so two
 * callers cannot wait in a cycle): serialises submissions of those subjects until the end.
 */
export const lockSubjects = (_s: string): Statement =>
  statement(
    'lock_subjects',
    `SELECT count(pg_advisory_xact_lock(hashtextextended(k.key, 0))) AS locked
     FROM (SELECT DISTINCT key FROM unnest($1::text[]) AS u (key) ORDER BY key) AS k`,
  );

/**
 * In: pipeline, subject, version. Out: the run of the highest version above `version`, if any
 * (whatever its status: a newer version that already ended still makes this one obsolete).
 */
export const selectNewerSubjectRun = (s: string): Statement =>
  statement(
    'select_newer_subject_run',
    `SELECT * FROM ${s}.runs WHERE pipeline = $1 AND subject_id = $2 AND subject_version > $3
     ORDER BY subject_version DESC LIMIT 1`,
  );

/** In: pipeline, subject, version, terminal statuses. Out: ids of lower versions that have not ended. */
export const selectOlderLiveSubjectRuns = (s: string): Statement =>
  statement(
    'select_older_live_subject_runs',
    `SELECT id FROM ${s}.runs WHERE pipeline = $1 AND subject_id = $2 AND subject_version < $3 AND status <> ALL ($4::text[])`,
  );

/** In: run ids. Locks their jobs (in id order, so two callers cannot deadlock): jobs before runs. */
export const lockJobsOfRuns = (s: string): Statement =>
  statement('lock_jobs_of_runs', `SELECT id FROM ${s}.jobs WHERE run_id = ANY ($1::text[]) ORDER BY id FOR UPDATE`);

/**
 * In: run ids. Out: those runs, locked, as they are now. NO KEY UPDATE: enqueues that only
 * reference the run (foreign keys take KEY SHARE) need not wait for it.
 */
export const lockRuns = (s: string): Statement =>
  statement('lock_runs', `SELECT * FROM ${s}.runs WHERE id = ANY ($1::text[]) ORDER BY id FOR NO KEY UPDATE`);

/**
 * In: now, run ids, final status, error JSON. Out: the ended runs. Their jobs are deleted and
 * remembered in retired_jobs (so holders learn `cancelled`), their stages that had not
 * succeeded become `skipped`. The caller has locked jobs and runs (lockJobsOfRuns, lockRuns).
 */
export const endRuns = (s: string): Statement =>
  statement(
    'end_runs',
    `
WITH retired AS (
  INSERT INTO ${s}.retired_jobs (job_id, run_id, retired_at)
  SELECT id, run_id, ${NOW} FROM ${s}.jobs WHERE run_id = ANY ($2::text[])
  ON CONFLICT DO NOTHING
),
deleted AS (DELETE FROM ${s}.jobs WHERE run_id = ANY ($2::text[])),
skipped AS (
  UPDATE ${s}.stage_records SET status = 'skipped', lease_owner = NULL, lease_until = NULL
  WHERE run_id = ANY ($2::text[]) AND status <> 'succeeded'
)
UPDATE ${s}.runs SET status = $3, error = $4::json, current_stage = NULL, finished_at = ${NOW}, updated_at = ${NOW}
WHERE id = ANY ($2::text[])
RETURNING *`,
  );

/** In: job id. Out: the job, locked. */
export const lockJob = (s: string): Statement => statement('lock_job', `SELECT * FROM ${s}.jobs WHERE id = $1 FOR UPDATE`);

/** In: run id. Out: one parked job of the run, locked. */
export const lockParkedJobOfRun = (s: string): Statement =>
  statement('lock_parked_job_of_run', `SELECT * FROM ${s}.jobs WHERE run_id = $1 AND state = 'parked' ORDER BY id LIMIT 1 FOR UPDATE`);

/** In: run id. Out: whether any compensation was ever enqueued for the run. */
export const selectAnyRollback = (s: string): Statement =>
  statement(
    'select_any_rollback',
    `SELECT EXISTS (SELECT 1 FROM ${s}.stage_records WHERE run_id = $1 AND rollback_status IS NOT NULL) AS found`,
  );

/** In: run id, idempotency key, job id. Out: whether another live job of the run holds the key. */
export const selectOtherLiveJobWithKey = (s: string): Statement =>
  statement(
    'select_other_live_job_with_key',
    `SELECT EXISTS (SELECT 1 FROM ${s}.jobs WHERE run_id = $1 AND idempotency_key = $2 AND state <> 'dead' AND id <> $3) AS found`,
  );

/**
 * In: now, job id, NOTIFY channel, clear ($4: also clear the run's error and finished_at).
 * Out: the job and its run after the move (JSON rows). A parked or dead job becomes ready now
 * as a fresh start (attempt 0), its stage record `pending`, its run `running` at its stage.
 */
export const restartJob = (s: string): Statement =>
  statement(
    'restart_job',
    `
WITH job AS (
  UPDATE ${s}.jobs SET state = 'ready', available_at = ${NOW}, attempt = 0,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE id = $2
  RETURNING *
),
staged AS (
  UPDATE ${s}.stage_records st SET status = 'pending'
  FROM job WHERE job.kind = 'stage' AND st.run_id = job.run_id AND st.stage = job.stage
),
moved AS (
  UPDATE ${s}.runs r SET status = 'running', current_stage = job.stage, updated_at = ${NOW},
    error = CASE WHEN $4 THEN NULL ELSE r.error END, finished_at = CASE WHEN $4 THEN NULL ELSE r.finished_at END
  FROM job WHERE r.id = job.run_id
  RETURNING r.*
),
woken AS (SELECT pg_notify($3, queue) FROM job)
SELECT row_to_json(job) AS job, (SELECT row_to_json(moved) FROM moved) AS run, (SELECT count(*) FROM woken)::int AS woken
FROM job`,
  );

/** In: run id. Out: the run and its stage records in pipeline order (one snapshot, JSON rows). */
export const getRun = (s: string): Statement =>
  statement(
    'get_run',
    `SELECT row_to_json(r) AS run,
       (SELECT coalesce(json_agg(st ORDER BY st.stage_index), '[]'::json) FROM ${s}.stage_records st WHERE st.run_id = r.id) AS stages
     FROM ${s}.runs r WHERE r.id = $1`,
  );
