/**
 * Statements of the `jobs` sub-port: submission, claim, commit, heartbeat, hand-back and reaper,
 * and ending runs early (cancel, supersede, drain; the operator port ends runs with these too).
 * Each export builds one statement for a schema `s` (quoted); its TSDoc says what goes in, what
 * comes out and the invariant it keeps. `$1` is always "now" where a statement needs the time.
 */
import { nowFrom, statement, type Statement } from '../database.ts';

/** "Now" in every statement that needs it: `$1`, or the database clock when `$1` is NULL. */
const NOW = nowFrom(1);

/** Clears every lease field, so no token matches the job again. */
const CLEAR_LEASE = 'lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL';

/**
 * In: now, the run's columns ($2..$14), finished ($15: finished_at = now), the status of its
 * stage records ($16) and their names in order ($17), and the first job ($18 id or NULL for
 * none, $19 stage, $20 queue, $21 kind, $22 key, $23 max attempts, $24 priority), the NOTIFY
 * channel ($25), the run's trace_parent ($26, added last by migration 0012). Out: the new run, or nothing when a run of the pipeline already holds the
 * idempotency key (ON CONFLICT waits for a concurrent holder to commit first). One statement:
 * run, stage records, job and wake-up commit together.
 */
export const insertRun = (s: string): Statement =>
  statement(
    'insert_run',
    `
WITH new_run AS (
  INSERT INTO ${s}.runs (id, pipeline, pipeline_version, status, current_stage, input, input_checksum, idempotency_key,
    subject_id, subject_version, tenant, trace_id, trace_parent, error, created_at, updated_at, finished_at)
  VALUES ($2, $3, $4, $5, $6, $7::json, $8, $9, $10, $11, $12, $13, $26, $14::json, ${NOW}, ${NOW}, CASE WHEN $15 THEN ${NOW} END)
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
 * Out: one (ord, created, run JSON) row per request, in order. `submit_runs` (routines/jobs-submit.sql)
 * creates the batch's runs, stage records and first jobs set-wise, all or nothing: a key reused
 * with another input raises SQLSTATE KL409 and the statement stores nothing.
 */
export const submitRuns = (s: string): Statement =>
  statement(
    'submit_runs',
    `SELECT r.ord, r.created, r.run FROM ${s}.submit_runs($2::json, $1::bigint, $3) AS r ORDER BY r.ord`,
  );

/**
 * In: tenant, a cap. Out: `n`, the tenant's queued or running runs, at most the cap (admission:
 * the count reads at most `cap` entries of index runs_in_flight, migration 0017).
 */
export const countTenantInFlight = (s: string): Statement =>
  statement(
    'count_tenant_in_flight',
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${s}.runs WHERE tenant = $1 AND status IN ('queued', 'running') LIMIT $2) AS r`,
  );

/** In: a cap. Out: `n`, the queued or running runs without a tenant, at most the cap. */
export const countUntenantedInFlight = (s: string): Statement =>
  statement(
    'count_untenanted_in_flight',
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${s}.runs WHERE tenant IS NULL AND status IN ('queued', 'running') LIMIT $1) AS r`,
  );

/** In: queue, a cap. Out: `n`, the queue's ready jobs (due or not), at most the cap (index jobs_ready). */
export const countQueueBacklog = (s: string): Statement =>
  statement(
    'count_queue_backlog',
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${s}.jobs WHERE queue = $1 AND state = 'ready' LIMIT $2) AS j`,
  );

/** In: pipeline, idempotency key. Out: the run submitted with that key (unique per pipeline). */
export const selectRunByKey = (s: string): Statement =>
  statement('select_run_by_key', `SELECT * FROM ${s}.runs WHERE pipeline = $1 AND idempotency_key = $2`);

/**
 * In: lock key texts. Takes each one's transaction-scoped advisory lock, in sorted order (so two
 * callers cannot wait in a cycle): serialises submissions of those subjects (and, with admission
 * limits, of those tenants and queues) until the end.
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

/**
 * In:  $1 now (NULL: the database clock), $2 queues text[], $3 worker ids text[], $4 limits int[],
 *      $5 lease ms bigint[] (one element per request, in request order; limits >= 1), and
 *      $6 lease tokens text[], at least as many as the limits add up to, $7 retry caps int[]
 *      (one per request; NULL: no cap).
 * Out: one row per claimed job, in request order then claim order: every `jobs` column after the
 *      lease, `pos`, `picked_state`, `run`, `run_started_at`, `outputs`, `ledger_hit` and
 *      `ledger_output` (see routines/jobs-claim.sql, where the work is done: inside the function
 *      the statement is planned once per connection, not on every call). ONE statement
 *      (autocommit: one transaction, one round trip) however many queues it serves.
 */
export const claimJobs = (s: string): Statement =>
  statement(
    'claim_jobs',
    `SELECT (c.job).*, c.pos, c.picked_state, c.run, c.run_started_at, c.outputs, c.ledger_hit, c.ledger_output
     FROM ${s}.claim_jobs($1::bigint, $2::text[], $3::text[], $4::int[], $5::bigint[], $6::text[], $7::int[]) AS c
     ORDER BY c.pos`,
  );

/**
 * In: now, items JSON (commit_item objects), NOTIFY channel, run statuses that may park.
 * Out: one (outcome, run_status, woken_queue, publications_refused) row per item, in order.
 * `commit_batch_with_publications` (routines/jobs-commit.sql) applies a batch of completions of
 * distinct runs set-wise, anything else item by item; publications go with their completion,
 * fenced by its lease.
 */
export const commit = (s: string): Statement =>
  statement(
    'commit',
    `SELECT c.outcome, c.run_status, c.woken_queue, c.publications_refused
     FROM ${s}.commit_batch_with_publications($2::json, ${NOW}, $3, $4::text[])
       WITH ORDINALITY AS c (outcome, run_status, woken_queue, publications_refused, ord)
     ORDER BY c.ord`,
  );

/**
 * In: now, job ids, tokens, has-progress flags, progress JSON texts (one element per renewal).
 * Out: per renewal in order: the new lease end, or the refusal (lost | cancelled). A held lease
 * (token matches, `leased`, not expired) is extended by the lease_ms granted at claim; the stage
 * record mirrors it, with the last progress marker sent for the job.
 */
export const renewLeases = (s: string): Statement =>
  statement(
    'renew_leases',
    `
WITH r AS (
  SELECT * FROM unnest($2::text[], $3::text[], $4::boolean[], $5::text[]) WITH ORDINALITY AS r (job_id, token, has_progress, progress, ord)
),
renewed AS (
  UPDATE ${s}.jobs j SET lease_until = ${NOW} + j.lease_ms
  FROM r WHERE j.id = r.job_id AND j.lease_token = r.token AND j.state = 'leased' AND j.lease_until > ${NOW}
  RETURNING j.id, j.run_id, j.stage, j.kind, j.lease_token, j.lease_until
),
progress AS (
  SELECT DISTINCT ON (r.job_id) r.job_id, r.progress FROM r
  JOIN renewed x ON x.id = r.job_id AND x.lease_token = r.token
  WHERE r.has_progress ORDER BY r.job_id, r.ord DESC
),
staged AS (
  -- The renewed lease is read from the job (migration 0020): the record changes for progress only.
  UPDATE ${s}.stage_records st SET progress = p.progress::json
  FROM renewed x JOIN progress p ON p.job_id = x.id
  WHERE x.kind = 'stage' AND st.run_id = x.run_id AND st.stage = x.stage
)
SELECT x.lease_until, CASE WHEN x.id IS NULL THEN ${s}.lease_refusal(r.job_id) END AS refusal
FROM r LEFT JOIN renewed x ON x.id = r.job_id AND x.lease_token = r.token
ORDER BY r.ord`,
  );

/**
 * In: now, job ids, tokens, NOTIFY channel, delays (ms, >= 0), lock waits. Out: the queue of
 * each job handed back and whether it is ready now: ready after its delay, the claim's attempt
 * not counted, its stage record `pending` again, lock_wait_since set (kept if set) for a lock
 * wait and cleared otherwise. Queues with a job ready now are notified.
 */
export const releaseJobs = (s: string): Statement =>
  statement(
    'release_jobs',
    `
WITH r AS (SELECT * FROM unnest($2::text[], $3::text[], $5::bigint[], $6::boolean[]) AS r (job_id, token, delay_ms, lock_wait)),
released AS (
  UPDATE ${s}.jobs j SET state = 'ready', available_at = ${NOW} + r.delay_ms, attempt = greatest(0, j.attempt - 1),
    lock_wait_since = CASE WHEN r.lock_wait THEN coalesce(j.lock_wait_since, ${NOW}) END, ${CLEAR_LEASE}
  FROM r WHERE j.id = r.job_id AND j.lease_token = r.token AND j.state = 'leased'
  RETURNING j.run_id, j.stage, j.kind, j.queue, j.started_at, r.delay_ms = 0 AS ready_now
),
staged AS (
  -- The job's attempt, added on read (migration 0020), no longer counts the claim.
  UPDATE ${s}.stage_records st SET status = 'pending', lease_owner = NULL, lease_until = NULL,
    started_at = coalesce(st.started_at, x.started_at)
  FROM released x WHERE x.kind = 'stage' AND st.run_id = x.run_id AND st.stage = x.stage
),
woken AS (SELECT pg_notify($4, q.queue) FROM (SELECT DISTINCT queue FROM released WHERE ready_now) q)
SELECT queue, ready_now, (SELECT count(*) FROM woken)::int AS woken FROM released`,
  );

/**
 * In: now, NOTIFY channel. Out: per queue, how many expired leases went back to ready (one more
 * redelivery each). Jobs being claimed right now are skipped, not waited for.
 */
export const reapExpired = (s: string): Statement =>
  statement(
    'reap_expired',
    `
WITH expired AS (
  SELECT id FROM ${s}.jobs WHERE state = 'leased' AND lease_until <= ${NOW} FOR UPDATE SKIP LOCKED
),
reaped AS (
  UPDATE ${s}.jobs j SET state = 'ready', redeliveries = j.redeliveries + 1, ${CLEAR_LEASE}
  FROM expired e WHERE j.id = e.id
  RETURNING j.run_id, j.stage, j.kind, j.queue, j.started_at
),
staged AS (
  -- A reaped stage still reads running, as it always has (the claim wrote no record: migration 0020).
  UPDATE ${s}.stage_records st SET status = 'running', lease_owner = NULL, lease_until = NULL,
    started_at = coalesce(st.started_at, x.started_at)
  FROM reaped x WHERE x.kind = 'stage' AND st.run_id = x.run_id AND st.stage = x.stage
),
woken AS (SELECT pg_notify($2, q.queue) FROM (SELECT DISTINCT queue FROM reaped) q)
SELECT queue, count(*)::int AS redelivered, (SELECT count(*) FROM woken)::int AS woken FROM reaped GROUP BY queue`,
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
  -- As read before the delete (one snapshot): a leased duplicate of a succeeded stage is running
  -- and is skipped too, and a live stage job's claims are counted (migration 0020).
  UPDATE ${s}.stage_records st SET status = CASE WHEN v.status = 'succeeded' THEN v.status ELSE 'skipped' END,
    attempts = v.attempts, started_at = v.started_at, lease_owner = NULL, lease_until = NULL
  FROM ${s}.stage_records_live v
  WHERE v.run_id = ANY ($2::text[]) AND st.run_id = v.run_id AND st.stage = v.stage
    AND (v.status <> 'succeeded' OR v.attempts <> st.attempts)
)
UPDATE ${s}.runs SET status = $3, error = $4::json, current_stage = NULL, finished_at = ${NOW}, updated_at = ${NOW}
WHERE id = ANY ($2::text[])
RETURNING *`,
  );
