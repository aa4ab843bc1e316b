/**
 * Statements of the `operator` sub-port: restarting parked and dead jobs, pausing and draining
 * queues. Each export builds one statement for a schema `s` (quoted); `$1` is always "now" where
 * a statement needs the time. Ending runs (cancel, drain) uses the jobs statements `lockRuns` and
 * `endRuns` (sql/jobs.ts), shared with supersession.
 */
import { nowFrom, statement, type Statement } from '../database.ts';

/** "Now" in every statement that needs it: `$1`, or the database clock when `$1` is NULL. */
const NOW = nowFrom(1);

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
WITH before AS (SELECT state, attempt FROM ${s}.jobs WHERE id = $2),
job AS (
  UPDATE ${s}.jobs SET state = 'ready', available_at = ${NOW}, attempt = 0,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE id = $2
  RETURNING *
),
staged AS (
  -- A parked job's claims were added on read (migration 0020); with its attempt reset the record
  -- counts them (a dead job's are counted already).
  UPDATE ${s}.stage_records st SET status = 'pending',
    attempts = st.attempts + CASE WHEN before.state = 'dead' THEN 0 ELSE before.attempt END,
    started_at = coalesce(st.started_at, job.started_at)
  FROM job, before WHERE job.kind = 'stage' AND st.run_id = job.run_id AND st.stage = job.stage
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

/** In: now, queue, paused, NOTIFY channel. Pauses or resumes the queue; a resumed queue is woken. */
export const upsertQueue = (s: string): Statement =>
  statement(
    'upsert_queue',
    `
WITH q AS (
  INSERT INTO ${s}.queues (name, paused, updated_at) VALUES ($2, $3, ${NOW})
  ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at
  RETURNING name, paused
)
SELECT pg_notify($4, name) FROM q WHERE NOT paused`,
  );

/**
 * In: queue. Out: its ready jobs (any due time), locked; jobs a claimer holds right now are
 * skipped (they are being leased, and leased jobs finish).
 */
export const lockReadyJobsOfQueue = (s: string): Statement =>
  statement('lock_ready_jobs_of_queue', `SELECT id, run_id FROM ${s}.jobs WHERE queue = $1 AND state = 'ready' ORDER BY id FOR UPDATE SKIP LOCKED`);
