/**
 * The SQL of the SQLite backend, as named constants (prepared once per connection by
 * `statements.ts`). Each header says what goes in, what comes out and the invariant it keeps.
 * Kept in TypeScript rather than `queries/*.sql` files so each statement sits next to its name
 * and type in one reviewable list; migrations stay in `migrations/*.sql`.
 */

// ---------------------------------------------------------------- runs

/** In: id. Out: the run row or nothing. */
export const SELECT_RUN = 'SELECT * FROM runs WHERE id = ?';

/** In: pipeline, idempotency key. Out: the run submitted with that key (unique per pipeline). */
export const SELECT_RUN_BY_IDEMPOTENCY_KEY = 'SELECT * FROM runs WHERE pipeline = ? AND idempotency_key = ?';

/** In: a JSON array of run ids. Out: those runs (any order). */
export const SELECT_RUNS_BY_IDS = 'SELECT * FROM runs WHERE id IN (SELECT value FROM json_each(?))';

/**
 * In: pipeline, subject, version. Out: the run of the highest version above `version`, if any
 * (whatever its status: a newer version that already ended still makes this one obsolete).
 */
export const SELECT_NEWER_SUBJECT_RUN = `
  SELECT * FROM runs
  WHERE pipeline = ? AND subject_id = ? AND subject_version > ?
  ORDER BY subject_version DESC LIMIT 1`;

/** In: pipeline, subject, version. Out: runs of lower versions that have not ended. */
export const SELECT_OLDER_LIVE_SUBJECT_RUNS = `
  SELECT * FROM runs
  WHERE pipeline = ? AND subject_id = ? AND subject_version < ?
    AND status NOT IN ('succeeded', 'failed', 'cancelled', 'superseded')`;

/** In: every column of a run as named parameters. */
export const INSERT_RUN = `
  INSERT INTO runs (id, pipeline, pipeline_version, status, current_stage, input, input_checksum,
    idempotency_key, subject_id, subject_version, tenant, trace_id, error, created_at, updated_at, finished_at)
  VALUES (@id, @pipeline, @pipeline_version, @status, @current_stage, @input, @input_checksum,
    @idempotency_key, @subject_id, @subject_version, @tenant, @trace_id, @error, @created_at, @updated_at, @finished_at)`;

/**
 * In: id and the run's new mutable state. Every run state change goes through this one write,
 * computed in TypeScript from the row read in the same transaction.
 */
export const UPDATE_RUN_STATE = `
  UPDATE runs SET status = @status, current_stage = @current_stage, error = @error,
    finished_at = @finished_at, updated_at = @updated_at
  WHERE id = @id`;

/** In: now, id. A queued run becomes running at its first claim; other statuses are left alone. */
export const MARK_RUN_RUNNING = "UPDATE runs SET status = 'running', updated_at = ? WHERE id = ? AND status = 'queued'";

/** In: optional filters (NULL = any), limit. Out: runs newest first (ids sort by creation time). */
export const LIST_RUNS = `
  SELECT * FROM runs
  WHERE (@pipeline IS NULL OR pipeline = @pipeline)
    AND (@status IS NULL OR status = @status)
    AND (@before IS NULL OR id < @before)
  ORDER BY id DESC LIMIT @limit`;

// ---------------------------------------------------------------- stage records

/** In: run id, stage, index. A new `pending` stage record. */
export const INSERT_STAGE = "INSERT INTO stage_records (run_id, stage, stage_index, status) VALUES (?, ?, ?, 'pending')";

/** In: run id. Out: its stage records in pipeline order. */
export const SELECT_STAGES_OF_RUN = 'SELECT * FROM stage_records WHERE run_id = ? ORDER BY stage_index';

/** In: a JSON array of run ids. Out: (run, stage, output) of their succeeded stages. */
export const SELECT_SUCCEEDED_OUTPUTS = `
  SELECT run_id, stage, output FROM stage_records
  WHERE run_id IN (SELECT value FROM json_each(?)) AND status = 'succeeded'`;

/** In: run id, stage, owner, lease end, now. A claimed stage job's record: running, one more attempt. */
export const CLAIM_STAGE = `
  UPDATE stage_records SET status = 'running', attempts = attempts + 1, lease_owner = @owner,
    lease_until = @lease_until, started_at = COALESCE(started_at, @now)
  WHERE run_id = @run_id AND stage = @stage`;

/**
 * In: lease end, set_progress (0/1), progress JSON, run id, stage. Mirrors a renewed lease and
 * records the progress marker when one was sent (a JSON `null` marker is stored as 'null').
 */
export const RENEW_STAGE = `
  UPDATE stage_records SET lease_until = @lease_until,
    progress = CASE WHEN @set_progress = 1 THEN @progress ELSE progress END
  WHERE run_id = @run_id AND stage = @stage`;

/** In: output, now, duration, run id, stage. The stage's success; a stale error is cleared. */
export const SUCCEED_STAGE = `
  UPDATE stage_records SET status = 'succeeded', output = @output, error = NULL, lease_owner = NULL,
    lease_until = NULL, finished_at = @now, duration_ms = @duration_ms
  WHERE run_id = @run_id AND stage = @stage`;

/** In: status (failed | dead_lettered), error, duration, finished_at (NULL = keep), run id, stage. */
export const FAIL_STAGE = `
  UPDATE stage_records SET status = @status, error = @error, duration_ms = @duration_ms,
    lease_owner = NULL, lease_until = NULL, finished_at = COALESCE(@finished_at, finished_at)
  WHERE run_id = @run_id AND stage = @stage`;

/** In: rollback status, run id, stage. */
export const SET_ROLLBACK_STATUS = 'UPDATE stage_records SET rollback_status = ? WHERE run_id = ? AND stage = ?';

/** In: run id, stage. A handed-back claim: pending again and the attempt not counted. */
export const RELEASE_STAGE = `
  UPDATE stage_records SET status = 'pending', attempts = MAX(0, attempts - 1), lease_owner = NULL, lease_until = NULL
  WHERE run_id = ? AND stage = ?`;

/** In: run id, stage. The lease on the record ended (expired and reaped). */
export const CLEAR_STAGE_LEASE = 'UPDATE stage_records SET lease_owner = NULL, lease_until = NULL WHERE run_id = ? AND stage = ?';

/** In: run id, stage. A replayed stage waits again. */
export const RESET_STAGE = "UPDATE stage_records SET status = 'pending' WHERE run_id = ? AND stage = ?";

/** In: run id. When a run ends early every stage that had not succeeded is `skipped`. */
export const SKIP_UNFINISHED_STAGES = `
  UPDATE stage_records SET status = 'skipped', lease_owner = NULL, lease_until = NULL
  WHERE run_id = ? AND status <> 'succeeded'`;

/** In: run id. Out: a row when any compensation was ever enqueued for the run. */
export const SELECT_ANY_ROLLBACK = 'SELECT 1 AS found FROM stage_records WHERE run_id = ? AND rollback_status IS NOT NULL LIMIT 1';

// ---------------------------------------------------------------- jobs

/**
 * In: every column of a new job. Out: its id, or nothing when a live job with the same
 * idempotency key exists (jobs_live_idempotency_key): duplicate enqueues collapse.
 */
export const INSERT_JOB = `
  INSERT INTO jobs (id, run_id, pipeline, stage, queue, kind, state, idempotency_key, attempt, max_attempts,
    priority, available_at, enqueued_at, tenant, trace_id)
  VALUES (@id, @run_id, @pipeline, @stage, @queue, @kind, 'ready', @idempotency_key, 0, @max_attempts,
    @priority, @available_at, @enqueued_at, @tenant, @trace_id)
  ON CONFLICT DO NOTHING
  RETURNING id`;

/** In: id. Out: the job row or nothing. */
export const SELECT_JOB = 'SELECT * FROM jobs WHERE id = ?';

/**
 * In: queue, now, limit. Out: ids of up to `limit` claimable jobs in claim order (priority,
 * available_at, id): ready and due, or leased with an expired lease. Each branch walks
 * jobs_claim in order and stops at `limit`, so the cost does not grow with queue depth.
 */
export const PICK_CLAIMABLE = `
  SELECT id FROM (
    SELECT id, priority, available_at FROM (
      SELECT id, priority, available_at FROM jobs
      WHERE queue = @queue AND state = 'ready' AND available_at <= @now
      ORDER BY priority, available_at, id LIMIT @limit)
    UNION ALL
    SELECT id, priority, available_at FROM (
      SELECT id, priority, available_at FROM jobs
      WHERE queue = @queue AND state = 'leased' AND lease_until <= @now
      ORDER BY priority, available_at, id LIMIT @limit))
  ORDER BY priority, available_at, id LIMIT @limit`;

/**
 * In: id, owner, token, fence, lease end and length. Out: the leased row. Taking over an expired
 * lease counts a redelivery (the right-hand side reads the row before the update).
 */
export const LEASE_JOB = `
  UPDATE jobs SET state = 'leased', attempt = attempt + 1, redeliveries = redeliveries + (state = 'leased'),
    lease_owner = @owner, lease_token = @token, fence = @fence, lease_until = @lease_until, lease_ms = @lease_ms
  WHERE id = @id
  RETURNING *`;

/** In: lease end, id. */
export const RENEW_JOB = 'UPDATE jobs SET lease_until = ? WHERE id = ?';

/**
 * In: id, new state (ready | parked | dead), available_at, attempt, last error. The job leaves
 * its lease (or its parked/dead state); every lease field is cleared so no token matches again.
 */
export const UNLEASE_JOB = `
  UPDATE jobs SET state = @state, available_at = @available_at, attempt = @attempt, last_error = @last_error,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE id = @id`;

/** In: now. Out: the jobs whose lease expired, now ready again with one more redelivery. */
export const REAP_EXPIRED = `
  UPDATE jobs SET state = 'ready', redeliveries = redeliveries + 1,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE state = 'leased' AND lease_until <= ?
  RETURNING run_id, stage, kind, queue`;

/** In: id. */
export const DELETE_JOB = 'DELETE FROM jobs WHERE id = ?';

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

/** In: idempotency key, job id. Out: another live job holding the key. */
export const SELECT_OTHER_LIVE_JOB_WITH_KEY = "SELECT id FROM jobs WHERE idempotency_key = ? AND state <> 'dead' AND id <> ?";

/** In: optional filters (NULL = any), limit. Out: jobs oldest first. */
export const LIST_JOBS = `
  SELECT * FROM jobs
  WHERE (@queue IS NULL OR queue = @queue)
    AND (@run_id IS NULL OR run_id = @run_id)
    AND (@state IS NULL OR state = @state)
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

// ---------------------------------------------------------------- ledger, queues, fences

/** In: key, run id, stage, kind, output, now. The first completion of a key wins. */
export const INSERT_LEDGER = `
  INSERT INTO ledger (key, run_id, stage, kind, output, completed_at) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (key) DO NOTHING`;

/** In: a JSON array of keys. Out: (key, output) of those in the ledger. */
export const SELECT_LEDGER_OUTPUTS = 'SELECT key, output FROM ledger WHERE key IN (SELECT value FROM json_each(?))';

/** In: run id. Out: its entries in completion (insertion) order. */
export const SELECT_LEDGER_OF_RUN = 'SELECT * FROM ledger WHERE run_id = ? ORDER BY rowid';

/** In: queue. Out: its paused flag, if the queue was ever paused or resumed. */
export const SELECT_QUEUE_PAUSED = 'SELECT paused FROM queues WHERE name = ?';

/** In: queue, paused (0/1), now. */
export const UPSERT_QUEUE = `
  INSERT INTO queues (name, paused, updated_at) VALUES (?, ?, ?)
  ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at`;

/** Out: every queue an operator paused or resumed. */
export const SELECT_QUEUES = 'SELECT name, paused FROM queues';

/**
 * In: n. Out: the counter after taking n fences; the caller owns (value - n, value]. Runs inside
 * the caller's BEGIN IMMEDIATE transaction, so fences never repeat across processes.
 */
export const TAKE_FENCES = 'UPDATE fence_counter SET value = value + ? WHERE id = 1 RETURNING value';
