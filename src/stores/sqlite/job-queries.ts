/**
 * The SQL of the SQLite store for the `jobs` and `retired_jobs` tables, as named constants
 * (prepared once per connection by `statements.ts`). Each header says what goes in, what comes
 * out and the invariant it keeps; the indexes they rely on are described in migration 0001.
 */
import { JOB_COLUMNS } from './rows.ts';

/**
 * In: every column of a new job. Changes one row, or none when a live job with the same
 * idempotency key exists (jobs_run_key, dead_slot = ''): duplicate enqueues collapse. (No
 * RETURNING: the change count says the same and costs less.)
 */
export const INSERT_JOB = `
  INSERT INTO jobs (id, run_id, pipeline, stage, queue, kind, state, idempotency_key, attempt, max_attempts,
    priority, available_at, enqueued_at, tenant, trace_id)
  VALUES (@id, @run_id, @pipeline, @stage, @queue, @kind, 'ready', @idempotency_key, 0, @max_attempts,
    @priority, @available_at, @enqueued_at, @tenant, @trace_id)
  ON CONFLICT DO NOTHING`;

/** In: id. Out: the job row or nothing. */
export const SELECT_JOB = 'SELECT * FROM jobs WHERE id = ?';

/** Largest `limit` one claim statement takes; a larger request gets at most this many jobs. */
export const MAX_PICK_LIMIT = 1000;

/**
 * In: queue, now. Out: up to `limit` claimable jobs, every column in {@link JOB_COLUMNS} order
 * (read raw: the claim builds its jobs from these rows instead of a RETURNING *), in claim order
 * (priority, available_at, id): ready and due (jobs_ready, which holds ready jobs only), or
 * leased with an expired lease (jobs_lease_expiry, usually empty). Each branch stops at `limit`,
 * so the cost does not grow with queue depth. `limit` is a literal, prepared once per value: a
 * bound LIMIT makes SQLite re-plan the statement on every call.
 */
export function pickClaimableSql(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PICK_LIMIT) {
    throw new RangeError(`claim limit must be an integer in 1..${MAX_PICK_LIMIT}, got ${limit}`);
  }
  return `
  SELECT ${JOB_COLUMNS} FROM (
    SELECT * FROM (
      SELECT * FROM jobs
      WHERE queue = @queue AND state = 'ready' AND available_at <= @now
      ORDER BY priority, available_at, id LIMIT ${limit})
    UNION ALL
    SELECT * FROM (
      SELECT * FROM jobs
      WHERE state = 'leased' AND lease_until <= @now AND queue = @queue
      ORDER BY priority, available_at, id LIMIT ${limit}))
  ORDER BY priority, available_at, id LIMIT ${limit}`;
}

/**
 * In: id and the lease as the claim computed it from the picked row (attempt + 1, redeliveries
 * + 1 when taking over an expired lease, owner, token, fence, lease end and length).
 */
export const LEASE_JOB = `
  UPDATE jobs SET state = 'leased', attempt = @attempt, redeliveries = @redeliveries,
    lease_owner = @owner, lease_token = @token, fence = @fence, lease_until = @lease_until, lease_ms = @lease_ms
  WHERE id = @id`;

/** In: lease end, id. */
export const RENEW_JOB = 'UPDATE jobs SET lease_until = ? WHERE id = ?';

/**
 * In: id, token, now. Out: what the next job, the ledger and the item's publications (the lease
 * fence) need from the job, when the lease is held (token matches, `leased`, not expired) — and
 * then the job is gone. Nothing when the lease
 * is refused, and nothing changed: the fence check and the delete are one statement.
 */
export const DELETE_LEASED_JOB = `
  DELETE FROM jobs WHERE id = @id AND lease_token = @token AND state = 'leased' AND lease_until > @now
  RETURNING run_id, pipeline, stage, kind, idempotency_key, tenant, trace_id, fence`;

/**
 * In: id, new state (ready | parked | dead), available_at, attempt, last error. The job leaves
 * its lease (or its parked/dead state); every lease field is cleared so no token matches again.
 * dead_slot follows the state (see migration 0001).
 */
export const UNLEASE_JOB = `
  UPDATE jobs SET state = @state, available_at = @available_at, attempt = @attempt, last_error = @last_error,
    dead_slot = CASE WHEN @state = 'dead' THEN id ELSE '' END,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE id = @id`;

/** In: now. Out: the jobs whose lease expired, now ready again with one more redelivery. */
export const REAP_EXPIRED = `
  UPDATE jobs SET state = 'ready', redeliveries = redeliveries + 1,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE state = 'leased' AND lease_until <= ?
  RETURNING run_id, stage, kind, queue`;

/** In: now, run id. Remembers the run's jobs before they are deleted (see retired_jobs). */
export const RETIRE_JOBS_OF_RUN = `
  INSERT INTO retired_jobs (job_id, run_id, retired_at) SELECT id, run_id, ? FROM jobs WHERE run_id = ?
  ON CONFLICT DO NOTHING`;

/** In: run id. */
export const DELETE_JOBS_OF_RUN = 'DELETE FROM jobs WHERE run_id = ?';

/** In: job id. Out: the status of the run of a retired (deleted) job. */
export const SELECT_RETIRED_JOB_RUN_STATUS = `
  SELECT r.status FROM retired_jobs t JOIN runs r ON r.id = t.run_id WHERE t.job_id = ?`;

/** In: queue. Out: its ready jobs (any due time). */
export const SELECT_READY_JOBS_OF_QUEUE = "SELECT id, run_id FROM jobs WHERE queue = ? AND state = 'ready'";

/** In: run id. Out: its parked jobs. */
export const SELECT_PARKED_JOBS_OF_RUN = "SELECT * FROM jobs WHERE run_id = ? AND state = 'parked'";

/** In: run id, idempotency key, job id. Out: another live job of the run holding the key. */
export const SELECT_OTHER_LIVE_JOB_WITH_KEY = `
  SELECT id FROM jobs WHERE run_id = ? AND idempotency_key = ? AND dead_slot = '' AND id <> ?`;

/** In: optional filters (NULL = any), limit. Out: jobs oldest first (a scan: jobs holds only live and dead jobs). */
export const LIST_JOBS = `
  SELECT * FROM jobs
  WHERE (@queue IS NULL OR queue = @queue) AND (@state IS NULL OR state = @state)
  ORDER BY enqueued_at, id LIMIT @limit`;

/** As {@link LIST_JOBS} for one run, found through jobs_run_key. */
export const LIST_JOBS_OF_RUN = `
  SELECT * FROM jobs
  WHERE run_id = @run_id AND (@queue IS NULL OR queue = @queue) AND (@state IS NULL OR state = @state)
  ORDER BY enqueued_at, id LIMIT @limit`;

/** In: now. Out: per queue with jobs, counts by state and the oldest due ready time. */
export const QUEUE_JOB_COUNTS = `
  SELECT queue,
    SUM(state = 'ready' AND available_at <= @now) AS ready,
    SUM(state = 'ready' AND available_at > @now) AS scheduled,
    SUM(state = 'leased') AS leased,
    SUM(state = 'parked') AS parked,
    SUM(state = 'dead') AS dead,
    MIN(CASE WHEN state = 'ready' AND available_at <= @now THEN available_at END) AS oldest_ready_at
  FROM jobs GROUP BY queue`;
