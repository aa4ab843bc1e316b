/**
 * The SQL of the SQLite store for runs, stage records, the ledger, queues and fences, as named
 * constants (prepared once per connection by `statements.ts`; job statements live in
 * `job-queries.ts`). Each header says what goes in, what comes out and the invariant it keeps.
 * Kept in TypeScript rather than `queries/*.sql` files so each statement sits next to its name
 * and type in one reviewable list; migrations stay in `migrations/*.sql`.
 */
import { RunStatus } from '../../core/model.ts';

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
 * In: id and the run's new mutable state, computed in TypeScript from the row read in the same
 * transaction. The general write, for the less frequent moves (failures, operator actions).
 */
export const UPDATE_RUN_STATE = `
  UPDATE runs SET status = @status, current_stage = @current_stage, error = @error,
    finished_at = @finished_at, updated_at = @updated_at
  WHERE id = @id`;

/**
 * In: id, stage, now. Out: the run's status. A completion moved the run on to `stage`; the status
 * is not assigned, so runs_status is not rewritten on every transition.
 */
export const MOVE_RUN_TO_STAGE = 'UPDATE runs SET current_stage = @stage, updated_at = @now WHERE id = @id RETURNING status';

/** In: id, now. Out: the run's status. A completion enqueued a compensation; the run stays put. */
export const TOUCH_RUN = 'UPDATE runs SET updated_at = @now WHERE id = @id RETURNING status';

/** In: id, final status (succeeded | failed), now. The last completion ends the run. */
export const FINISH_RUN = `
  UPDATE runs SET status = @status, current_stage = NULL, finished_at = @now, updated_at = @now
  WHERE id = @id`;

/** In: now, id. A queued run becomes running at its first claim; other statuses are left alone. */
export const MARK_RUN_RUNNING = "UPDATE runs SET status = 'running', updated_at = ? WHERE id = ? AND status = 'queued'";

/**
 * In: optional pipeline (NULL = any), ids below `before`, limit. Out: runs newest first (ids sort
 * by creation time), walking the table from its newest end.
 */
export const LIST_RUNS = `
  SELECT * FROM runs
  WHERE id < @before AND (@pipeline IS NULL OR pipeline = @pipeline)
  ORDER BY id DESC LIMIT @limit`;

/**
 * In: subject, optional pipeline and status (NULL = any), ids below `before`, limit. Out: the
 * subject's runs newest first, walking runs_subject_id (migration 0004) within the subject: a
 * subject has few runs, so the other filters are checked row by row.
 */
export const LIST_RUNS_OF_SUBJECT = `
  SELECT * FROM runs INDEXED BY runs_subject_id
  WHERE subject_id = @subject_id AND id < @before AND (@pipeline IS NULL OR pipeline = @pipeline)
    AND (@status IS NULL OR status = @status)
  ORDER BY id DESC LIMIT @limit`;

/** Statuses runs_status indexes (migration 0001): the ones an operator looks for. */
const INDEXED_STATUSES: ReadonlySet<RunStatus> = new Set(['failed', 'dead_lettered', 'cancelled', 'superseded', 'parked']);

/**
 * As {@link LIST_RUNS} for one status. The status is a literal (validated against the
 * RunStatus values) so that SQLite can use the partial runs_status index for the statuses it
 * holds; the others walk the table newest first.
 */
export function listRunsByStatusSql(status: RunStatus): string {
  if (!(Object.values(RunStatus) as string[]).includes(status)) throw new RangeError(`unknown run status ${status}`);
  const index = INDEXED_STATUSES.has(status) ? 'INDEXED BY runs_status' : '';
  return `
  SELECT * FROM runs ${index}
  WHERE status = '${status}' AND id < @before AND (@pipeline IS NULL OR pipeline = @pipeline)
  ORDER BY id DESC LIMIT @limit`;
}

// ---------------------------------------------------------------- stage records

/**
 * In: (run id, stage, index) for each of `count` stages. New `pending` stage records, in one
 * statement per submission; prepared once per stage count.
 */
export function insertStagesSql(count: number): string {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`stage count must be a positive integer, got ${count}`);
  const rows = Array.from({ length: count }, () => "(?, ?, ?, 'pending')").join(', ');
  return `INSERT INTO stage_records (run_id, stage, stage_index, status) VALUES ${rows}`;
}

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

// ---------------------------------------------------------------- ledger, queues, fences

/**
 * In: run id, key, stage, kind, output, now. The first completion of a key wins (ON CONFLICT DO
 * NOTHING); `seq` is the run's entry count so far, i.e. the entry's place in completion order.
 */
export const INSERT_LEDGER = `
  INSERT INTO ledger (run_id, key, seq, stage, kind, output, completed_at)
  VALUES (@run_id, @key, (SELECT count(*) FROM ledger WHERE run_id = @run_id), @stage, @kind, @output, @now)
  ON CONFLICT DO NOTHING`;

/**
 * In: a JSON array of [run id, key] pairs. Out: (key, output) of those already in the ledger,
 * each found by its primary key.
 */
export const SELECT_LEDGER_OUTPUTS = `
  SELECT l.key, l.output FROM json_each(?) AS j
  JOIN ledger AS l ON l.run_id = j.value ->> 0 AND l.key = j.value ->> 1`;

/** In: run id. Out: its entries in completion order. */
export const SELECT_LEDGER_OF_RUN = 'SELECT * FROM ledger WHERE run_id = ? ORDER BY seq';

/** Out: the queues an operator paused (a claim reads them once per transaction). */
export const SELECT_PAUSED_QUEUES = 'SELECT name FROM queues WHERE paused = 1';

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
