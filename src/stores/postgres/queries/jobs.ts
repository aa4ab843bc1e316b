/**
 * Statements on jobs, leases, queues and the ledger: commit, heartbeat, hand-back, reaper,
 * pausing, and the reads behind `getJob`, `readLedger` and `queueStats`. Each export builds one
 * statement for a schema `s` (quoted); `$1` is always "now" where a statement needs the time.
 */
import { DB_NOW_MS, nowFrom, statement, type Statement } from '../database.ts';

/** "Now" in every statement that needs it: `$1`, or the database clock when `$1` is NULL. */
const NOW = nowFrom(1);

/** Clears every lease field, so no token matches the job again. */
const CLEAR_LEASE = 'lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL';

/** The database clock, epoch ms. */
export const dbNow = (_s: string): Statement => statement('db_now', `SELECT ${DB_NOW_MS} AS now`);

/**
 * In: now, items JSON (see migrations 0003 and 0007), NOTIFY channel, run statuses that may park.
 * Out: one (outcome, run_status, woken_queue, publications_refused) row per item, in order.
 * `commit_batch_with_publications` (0007; `commit_batch` of 0004 before) applies a batch of
 * completions of distinct runs set-wise, anything else item by item; publications go with their
 * completion, fenced by its lease.
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
  UPDATE ${s}.stage_records st SET lease_until = x.lease_until,
    progress = CASE WHEN p.job_id IS NULL THEN st.progress ELSE p.progress::json END
  FROM renewed x LEFT JOIN progress p ON p.job_id = x.id
  WHERE x.kind = 'stage' AND st.run_id = x.run_id AND st.stage = x.stage
)
SELECT x.lease_until, CASE WHEN x.id IS NULL THEN ${s}.lease_refusal(r.job_id) END AS refusal
FROM r LEFT JOIN renewed x ON x.id = r.job_id AND x.lease_token = r.token
ORDER BY r.ord`,
  );

/**
 * In: now, job ids, tokens, NOTIFY channel. Out: the queue of each job handed back: ready now,
 * the claim's attempt not counted, its stage record `pending` again.
 */
export const releaseJobs = (s: string): Statement =>
  statement(
    'release_jobs',
    `
WITH r AS (SELECT * FROM unnest($2::text[], $3::text[]) AS r (job_id, token)),
released AS (
  UPDATE ${s}.jobs j SET state = 'ready', available_at = ${NOW}, attempt = greatest(0, j.attempt - 1), ${CLEAR_LEASE}
  FROM r WHERE j.id = r.job_id AND j.lease_token = r.token AND j.state = 'leased'
  RETURNING j.run_id, j.stage, j.kind, j.queue
),
staged AS (
  UPDATE ${s}.stage_records st SET status = 'pending', attempts = greatest(0, st.attempts - 1), lease_owner = NULL, lease_until = NULL
  FROM released x WHERE x.kind = 'stage' AND st.run_id = x.run_id AND st.stage = x.stage
),
woken AS (SELECT pg_notify($4, q.queue) FROM (SELECT DISTINCT queue FROM released) q)
SELECT queue, (SELECT count(*) FROM woken)::int AS woken FROM released`,
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
  RETURNING j.run_id, j.stage, j.kind, j.queue
),
staged AS (
  UPDATE ${s}.stage_records st SET lease_owner = NULL, lease_until = NULL
  FROM reaped x WHERE x.kind = 'stage' AND st.run_id = x.run_id AND st.stage = x.stage
),
woken AS (SELECT pg_notify($2, q.queue) FROM (SELECT DISTINCT queue FROM reaped) q)
SELECT queue, count(*)::int AS redelivered, (SELECT count(*) FROM woken)::int AS woken FROM reaped GROUP BY queue`,
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

/** In: id. Out: the job row or nothing. */
export const getJob = (s: string): Statement => statement('get_job', `SELECT * FROM ${s}.jobs WHERE id = $1`);

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
