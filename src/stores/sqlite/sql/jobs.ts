/**
 * The SQL of the `jobs` sub-port: runs, stage records, jobs, retired jobs, the ledger and fences
 * as the job path (submit, claim, renew, commit, release, reap) and the run moves it shares with
 * the operator read and write them. Each header says what goes in, what comes out and the
 * invariant it keeps; the indexes they rely on are described in migration 0001.
 */
import type { JobKind, JobState, RollbackStatus, RunStatus, StageStatus } from '../../../core/model.ts';
import { preparedPerValue, type SqliteDatabase } from '../connection.ts';
import { currentStageOf, runColumns } from './run-columns.ts';
import { RAW_JOB, RAW_RUN, type FailedAttemptRow, type JobRow, type RunRow } from '../rows.ts';

// ---------------------------------------------------------------- runs

/** In: id. Out: the run row or nothing. */
export const SELECT_RUN = `SELECT ${runColumns('r')} FROM runs AS r WHERE r.id = ?`;

/** In: pipeline, idempotency key. Out: the run submitted with that key (unique per pipeline). */
export const SELECT_RUN_BY_IDEMPOTENCY_KEY = `SELECT ${runColumns('r')} FROM runs AS r WHERE r.pipeline = ? AND r.idempotency_key = ?`;

/**
 * In: tenant (null: runs without one), a cap. Out: `n`, the tenant's queued or running runs, at
 * most the cap (admission: the count costs no more than the limit; index runs_in_flight, 0012).
 */
export const COUNT_TENANT_IN_FLIGHT = `
  SELECT count(*) AS n FROM (SELECT 1 FROM runs WHERE tenant IS ? AND status IN ('queued', 'running') LIMIT ?)`;

/** In: queue, a cap. Out: `n`, the queue's ready jobs (due or not), at most the cap (covering index jobs_ready_tenant). */
export const COUNT_QUEUE_BACKLOG = `
  SELECT count(*) AS n FROM (SELECT 1 FROM jobs WHERE queue = ? AND state = 'ready' LIMIT ?)`;

/**
 * In: a JSON array of run ids. Out: those runs' rows as stored, raw (RAW_RUN; any order):
 * the claim reads each run's current stage and last change from the job it claimed (claim.ts,
 * asReadWith).
 */
export const SELECT_RUNS_BY_IDS = `SELECT ${RAW_RUN.columns} FROM runs WHERE id IN (SELECT value FROM json_each(?))`;

/**
 * In: pipeline, subject, version. Out: the run of the highest version above `version`, if any
 * (whatever its status: a newer version that already ended still makes this one obsolete).
 */
export const SELECT_NEWER_SUBJECT_RUN = `
  SELECT ${runColumns('r')} FROM runs AS r
  WHERE r.pipeline = ? AND r.subject_id = ? AND r.subject_version > ?
  ORDER BY r.subject_version DESC LIMIT 1`;

/** In: pipeline, subject, version. Out: runs of lower versions that have not ended. */
export const SELECT_OLDER_LIVE_SUBJECT_RUNS = `
  SELECT ${runColumns('r')} FROM runs AS r
  WHERE r.pipeline = ? AND r.subject_id = ? AND r.subject_version < ?
    AND r.status NOT IN ('succeeded', 'failed', 'cancelled', 'superseded')`;

/** In: every column of a run as named parameters. */
export const INSERT_RUN = `
  INSERT INTO runs (id, pipeline, pipeline_version, status, current_stage, input, input_checksum,
    idempotency_key, subject_id, subject_version, tenant, trace_id, trace_parent, error, created_at, updated_at, finished_at)
  VALUES (@id, @pipeline, @pipeline_version, @status, @current_stage, @input, @input_checksum,
    @idempotency_key, @subject_id, @subject_version, @tenant, @trace_id, @trace_parent, @error, @created_at, @updated_at, @finished_at)`;

/**
 * In: id and the run's new mutable state, computed in TypeScript from the row read in the same
 * transaction. The general write, for the less frequent moves (failures, operator actions).
 */
export const UPDATE_RUN_STATE = `
  UPDATE runs SET status = @status, current_stage = @current_stage, error = @error,
    finished_at = @finished_at, updated_at = @updated_at
  WHERE id = @id`;

/**
 * In: id. Out: the run's status. A completion that moves the run on to its next stage reads it and
 * writes nothing: the stage and the time it moved are read from the job it enqueued (run-columns.ts).
 */
export const SELECT_RUN_STATUS = 'SELECT status FROM runs WHERE id = ?';

/**
 * In: id, now. Out: the run's status. A completion enqueued a compensation, or an attempt is
 * retried: the run stays where it is, and its current stage is written as read (run-columns.ts).
 */
export const TOUCH_RUN = `UPDATE runs SET updated_at = @now, current_stage = ${currentStageOf('runs')} WHERE id = @id RETURNING status`;

/** In: id, final status (succeeded | failed), now. The last completion ends the run. */
export const FINISH_RUN = `
  UPDATE runs SET status = @status, current_stage = NULL, finished_at = @now, updated_at = @now
  WHERE id = @id`;

/** In: now, id. A queued run becomes running at its first claim; other statuses are left alone. */
export const MARK_RUN_RUNNING = "UPDATE runs SET status = 'running', updated_at = ? WHERE id = ? AND status = 'queued'";

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

/**
 * In: a JSON array of run ids. Out: (run, stage, output) of their succeeded stages, as
 * stage_records_live reads them (migration 0015): a stage whose job is leased — a duplicate of a
 * succeeded stage being claimed, this batch's included — is running, not an output. The view's
 * join is made for the succeeded records only (half the cost of a claim's reads through the view);
 * its predicate is the view's (migration 0015), so the two change together.
 */
export const SELECT_SUCCEEDED_OUTPUTS = `
  SELECT s.run_id, s.stage, s.output FROM stage_records AS s
  WHERE s.run_id IN (SELECT value FROM json_each(?)) AND s.status = 'succeeded'
    AND NOT EXISTS (
      SELECT 1 FROM jobs AS j
      WHERE j.run_id = s.run_id AND j.stage = s.stage AND j.kind = 'stage' AND j.dead_slot = '' AND j.state = 'leased')`;

/**
 * In: run id, stage, progress JSON. A renewal's progress marker (a JSON `null` marker is stored
 * as 'null'). The renewed lease itself is read from the job (migration 0015).
 */
export const SET_STAGE_PROGRESS = 'UPDATE stage_records SET progress = @progress WHERE run_id = @run_id AND stage = @stage';

/**
 * In: output, now, duration, the completed job's attempt and first claim, run id, stage. The
 * stage's success, counting the job's claims (migration 0015); a stale error is cleared.
 */
export const SUCCEED_STAGE = `
  UPDATE stage_records SET status = 'succeeded', output = ?, error = NULL, lease_owner = NULL,
    lease_until = NULL, finished_at = ?, duration_ms = ?, attempts = attempts + ?,
    started_at = COALESCE(started_at, ?)
  WHERE run_id = ? AND stage = ?`;

/**
 * In: status (failed | dead_lettered), error, duration, finished_at (NULL = keep), the job's
 * claims to count (its attempt when it is dead now, else 0: a live job's are added on read,
 * migration 0015), its first claim, run id, stage.
 */
export const FAIL_STAGE = `
  UPDATE stage_records SET status = @status, error = @error, duration_ms = @duration_ms,
    lease_owner = NULL, lease_until = NULL, finished_at = COALESCE(@finished_at, finished_at),
    attempts = attempts + @attempts, started_at = COALESCE(started_at, @started_at)
  WHERE run_id = @run_id AND stage = @stage`;

/** In: rollback status, run id, stage. */
export const SET_ROLLBACK_STATUS = 'UPDATE stage_records SET rollback_status = ? WHERE run_id = ? AND stage = ?';

/**
 * In: the job's first claim, run id, stage. A handed-back claim: pending again (the job's
 * attempt, added on read, no longer counts it).
 */
export const RELEASE_STAGE = `
  UPDATE stage_records SET status = 'pending', lease_owner = NULL, lease_until = NULL, started_at = COALESCE(started_at, ?)
  WHERE run_id = ? AND stage = ?`;

/** In: the job's first claim, run id, stage. The lease expired and was reaped: still `running`, as ever. */
export const REAP_STAGE = `
  UPDATE stage_records SET status = 'running', lease_owner = NULL, lease_until = NULL, started_at = COALESCE(started_at, ?)
  WHERE run_id = ? AND stage = ?`;

/**
 * In: run id. When a run ends early every stage that had not succeeded (as read: a leased
 * duplicate of a succeeded stage is running) is `skipped`, and the claims of its live stage job
 * are counted (the job is deleted next; migration 0015). Runs before the run's jobs are deleted;
 * a succeeded stage with nothing to count is not rewritten.
 */
export const SKIP_UNFINISHED_STAGES = `
  UPDATE stage_records SET status = CASE WHEN v.status = 'succeeded' THEN v.status ELSE 'skipped' END,
    attempts = v.attempts, started_at = v.started_at, lease_owner = NULL, lease_until = NULL
  FROM stage_records_live AS v
  WHERE stage_records.run_id = ? AND v.run_id = stage_records.run_id AND v.stage = stage_records.stage
    AND (v.status <> 'succeeded' OR v.attempts <> stage_records.attempts)`;

// ---------------------------------------------------------------- jobs

/**
 * In: every column of a new job. Changes one row, or none when a live job with the same
 * idempotency key exists (jobs_run_key, dead_slot = ''): duplicate enqueues collapse. (No
 * RETURNING: the change count says the same and costs less.)
 */
export const INSERT_JOB = `
  INSERT INTO jobs (id, run_id, pipeline, stage, queue, kind, state, idempotency_key, attempt, max_attempts,
    priority, available_at, enqueued_at, tenant, trace_id)
  VALUES (?, ?, ?, ?, ?, ?, 'ready', ?, 0, ?, ?, ?, ?, ?, ?)
  ON CONFLICT DO NOTHING`;

/** In: id. Out: the job row or nothing. */
export const SELECT_JOB = 'SELECT * FROM jobs WHERE id = ?';

/** Largest `limit` one claim statement takes; a larger request gets at most this many jobs. */
export const MAX_PICK_LIMIT = 1000;

/** Throws unless `limit` is a pick limit a statement can be prepared for. */
function checkPickLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PICK_LIMIT) {
    throw new RangeError(`claim limit must be an integer in 1..${MAX_PICK_LIMIT}, got ${limit}`);
  }
}

/**
 * In: queue. Out: the distinct tenants (NULL included) with ready jobs in the queue, by a
 * skip-scan of jobs_ready_tenant (migration 0013): one seek per tenant, whatever the depth. A
 * tenant whose ready jobs are all scheduled later is listed too (its pick comes back empty).
 */
export const SELECT_READY_TENANTS = `
  WITH RECURSIVE t(tenant) AS (
    SELECT (SELECT tenant FROM jobs INDEXED BY jobs_ready_tenant
            WHERE queue = @queue AND state = 'ready' AND tenant IS NOT NULL ORDER BY tenant LIMIT 1)
    UNION ALL
    SELECT (SELECT j.tenant FROM jobs AS j INDEXED BY jobs_ready_tenant
            WHERE j.queue = @queue AND j.state = 'ready' AND j.tenant > t.tenant ORDER BY j.tenant LIMIT 1)
    FROM t WHERE t.tenant IS NOT NULL)
  SELECT tenant FROM t WHERE tenant IS NOT NULL
  UNION ALL
  SELECT NULL WHERE EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_ready_tenant WHERE queue = @queue AND state = 'ready' AND tenant IS NULL)`;

/** The expired leases of @queue at @now in plain order, at most `limit` (jobs_lease_expiry). */
function expiredLeasesSql(limit: number): string {
  return `
      SELECT * FROM jobs
      WHERE state = 'leased' AND lease_until <= @now AND queue = @queue
      ORDER BY priority, available_at, id LIMIT ${limit}`;
}

/**
 * In: queue, tenant (NULL = the tenant-less jobs), now. Out: the first `limit` ready and due jobs
 * of that tenant in plain order (priority, available_at, id), every column in
 * {@link RAW_JOB} order (read raw: the claim builds its jobs from these rows instead of a
 * RETURNING *), off jobs_ready_tenant. `variant`: `firstAttempts`, only jobs never claimed
 * before (`attempt = 0`: a retry cap applies); `withExpired`, followed by the queue's first
 * `limit` expired leases (see {@link pickRetriesSql}) in the same statement, the claim's usual
 * case (one tenant, no cap) in one statement. `limit` is a literal, prepared once per value: a
 * bound LIMIT makes SQLite re-plan the statement on every call.
 */
export function pickTenantReadySql(limit: number, variant: 'all' | 'firstAttempts' | 'withExpired'): string {
  checkPickLimit(limit);
  const heads = `
      SELECT * FROM jobs INDEXED BY jobs_ready_tenant
      WHERE queue = @queue AND state = 'ready' AND tenant IS @tenant AND available_at <= @now${variant === 'firstAttempts' ? ' AND attempt = 0' : ''}
      ORDER BY priority, available_at, id LIMIT ${limit}`;
  if (variant !== 'withExpired') return `SELECT ${RAW_JOB.columns} FROM (${heads})`;
  return `SELECT ${RAW_JOB.columns} FROM (SELECT * FROM (${heads}) UNION ALL SELECT * FROM (${expiredLeasesSql(limit)}))`;
}

/**
 * In: queue, now. Out: the first `limit` leased jobs of the queue whose lease expired (a
 * redelivery), in plain order, off jobs_lease_expiry (usually empty). With `withReadyRetries`,
 * ready and due retries (attempt >= 1, off jobs_ready_retries) too, merged in plain order: the
 * retries a claim under a retry cap may take. Each branch stops at `limit`.
 */
export function pickRetriesSql(limit: number, withReadyRetries: boolean): string {
  checkPickLimit(limit);
  if (!withReadyRetries) return `SELECT ${RAW_JOB.columns} FROM (${expiredLeasesSql(limit)})`;
  return `
  SELECT ${RAW_JOB.columns} FROM (
    SELECT * FROM (
      SELECT * FROM jobs INDEXED BY jobs_ready_retries
      WHERE queue = @queue AND state = 'ready' AND attempt >= 1 AND available_at <= @now
      ORDER BY priority, available_at, id LIMIT ${limit})
    UNION ALL
    SELECT * FROM (${expiredLeasesSql(limit)}))
  ORDER BY priority, available_at, id LIMIT ${limit}`;
}

/** In: queue, now. Out: `n`, the queue's retries running: leased, unexpired, past the first attempt. */
export const COUNT_RETRIES_RUNNING = `
  SELECT count(*) AS n FROM jobs INDEXED BY jobs_retries_running
  WHERE queue = @queue AND state = 'leased' AND attempt >= 2 AND lease_until > @now`;

/**
 * In: id and the lease as the claim computed it from the picked row (attempt + 1, redeliveries
 * + 1 when taking over an expired lease, owner, token, fence, lease end and length), now (the
 * job's first claim, kept: its stage's start while the record has none, migration 0015).
 */
export const LEASE_JOB = `
  UPDATE jobs SET state = 'leased', attempt = ?, redeliveries = ?,
    lease_owner = ?, lease_token = ?, fence = ?, lease_until = ?, lease_ms = ?,
    started_at = COALESCE(started_at, ?)
  WHERE id = ?`;

/** In: lease end, id. */
export const RENEW_JOB = 'UPDATE jobs SET lease_until = ? WHERE id = ?';

/**
 * In: id, token, now. Out: what the next job, the ledger and the item's publications (the lease
 * fence) need from the job, when the lease is held (token matches, `leased`, not expired) — and
 * then the job is gone. Nothing when the lease is refused, and nothing changed: the fence check
 * and the delete are one statement.
 */
export const DELETE_LEASED_JOB = `
  DELETE FROM jobs WHERE id = ? AND lease_token = ? AND state = 'leased' AND lease_until > ?
  RETURNING run_id, pipeline, stage, kind, idempotency_key, tenant, trace_id, fence, attempt, started_at`;

/**
 * In: id, new state (ready | parked | dead), available_at, attempt, last error, lock wait start.
 * The job leaves its lease (or its parked/dead state); every lease field is cleared so no token
 * matches again. dead_slot follows the state (see migration 0001).
 */
export const UNLEASE_JOB = `
  UPDATE jobs SET state = @state, available_at = @available_at, attempt = @attempt, last_error = @last_error,
    lock_wait_since = @lock_wait_since, dead_slot = CASE WHEN @state = 'dead' THEN id ELSE '' END,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE id = @id`;

/** In: now. Out: the jobs whose lease expired, now ready again with one more redelivery. */
export const REAP_EXPIRED = `
  UPDATE jobs SET state = 'ready', redeliveries = redeliveries + 1,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE state = 'leased' AND lease_until <= ?
  RETURNING run_id, stage, kind, queue, started_at`;

/** In: now, run id. Remembers the run's jobs before they are deleted (see retired_jobs). */
export const RETIRE_JOBS_OF_RUN = `
  INSERT INTO retired_jobs (job_id, run_id, retired_at) SELECT id, run_id, ? FROM jobs WHERE run_id = ?
  ON CONFLICT DO NOTHING`;

/** In: run id. */
export const DELETE_JOBS_OF_RUN = 'DELETE FROM jobs WHERE run_id = ?';

/** In: job id. Out: the status of the run of a retired (deleted) job. */
export const SELECT_RETIRED_JOB_RUN_STATUS = `
  SELECT r.status FROM retired_jobs t JOIN runs r ON r.id = t.run_id WHERE t.job_id = ?`;

// ---------------------------------------------------------------- ledger, paused queues, fences

/**
 * In: run id, key, stage, kind, output, now. The first completion of a key wins (ON CONFLICT DO
 * NOTHING); `seq` is the run's entry count so far, i.e. the entry's place in completion order.
 */
export const INSERT_LEDGER = `
  INSERT INTO ledger (run_id, key, seq, stage, kind, output, completed_at)
  VALUES (?, ?, (SELECT count(*) FROM ledger WHERE run_id = ?), ?, ?, ?, ?)
  ON CONFLICT DO NOTHING`;

/**
 * In: the failed attempt's run, job, stage, kind, queue, attempt, worker, action, error JSON,
 * duration, now. Appends it to the run's failure history (migration 0008); `seq` is the run's
 * failure count so far. Written by the failure path of a commit only.
 */
export const INSERT_FAILED_ATTEMPT = `
  INSERT INTO failed_attempts (run_id, seq, job_id, stage, kind, queue, attempt, worker, action, error, duration_ms, failed_at)
  VALUES (@run_id, (SELECT count(*) FROM failed_attempts WHERE run_id = @run_id), @job_id, @stage, @kind, @queue, @attempt,
    @worker, @action, @error, @duration_ms, @now)`;

/**
 * In: a JSON array of [run id, key] pairs. Out: (key, output) of those already in the ledger,
 * each found by its primary key.
 */
export const SELECT_LEDGER_OUTPUTS = `
  SELECT l.key, l.output FROM json_each(?) AS j
  JOIN ledger AS l ON l.run_id = j.value ->> 0 AND l.key = j.value ->> 1`;

/** Out: the queues an operator paused (a claim reads them once per transaction). */
export const SELECT_PAUSED_QUEUES = 'SELECT name FROM queues WHERE paused = 1';

/**
 * In: n. Out: the counter after taking n fences; the caller owns (value - n, value]. Runs inside
 * the caller's BEGIN IMMEDIATE transaction, so fences never repeat across processes. Job leases
 * and cache builder leases take fences from this one sequence.
 */
export const TAKE_FENCES = 'UPDATE fence_counter SET value = value + ? WHERE id = 1 RETURNING value';

// ---------------------------------------------------------------- parameters and rows

/** Values bound by `UPDATE_RUN_STATE`. */
export interface RunStateParams {
  id: string;
  status: RunStatus;
  current_stage: string | null;
  error: string | null;
  finished_at: number | null;
  updated_at: number;
}

/*
 * The job path's hottest statements take positional parameters (better-sqlite3 binds `?` in
 * order of appearance; it has no `?NNN`), in the order of these tuples: binding an object by
 * name cost about 0.8 µs more per statement, several times per stage transition.
 */

/** Values bound by `INSERT_JOB`: the columns a new job is given (the rest take their defaults). */
export type InsertJobParams = [
  id: string,
  runId: string,
  pipeline: string,
  stage: string,
  queue: string,
  kind: JobKind,
  idempotencyKey: string,
  maxAttempts: number,
  priority: number,
  availableAt: number,
  enqueuedAt: number,
  tenant: string | null,
  traceId: string | null,
];

/** Values bound by `LEASE_JOB`. */
export type LeaseJobParams = [
  attempt: number,
  redeliveries: number,
  owner: string,
  token: string,
  fence: number,
  leaseUntil: number,
  leaseMs: number,
  now: number,
  id: string,
];

/** Values bound by `UNLEASE_JOB`. */
export interface UnleaseJobParams {
  id: string;
  state: JobState;
  available_at: number;
  attempt: number;
  last_error: string | null;
  lock_wait_since: number | null;
}

/** Values bound by `INSERT_LEDGER`. */
export type InsertLedgerParams = [runId: string, key: string, runIdAgain: string, stage: string, kind: JobKind, output: string, now: number];

/** Values bound by `INSERT_FAILED_ATTEMPT`: the row but its `seq` (counted) and `failed_at` (now). */
export type InsertFailedAttemptParams = Omit<FailedAttemptRow, 'seq' | 'failed_at'> & { now: number };

/** Values bound by `SUCCEED_STAGE`. */
type SucceedStageParams = [output: string, now: number, durationMs: number, attempt: number, startedAt: number | null, runId: string, stage: string];

/** Values bound by `FAIL_STAGE`. */
interface FailStageParams {
  run_id: string;
  stage: string;
  status: StageStatus;
  error: string;
  duration_ms: number;
  finished_at: number | null;
  attempts: number;
  started_at: number | null;
}

/**
 * What a fenced delete returns: enough to write the ledger, enqueue the next job and fence the
 * item's publications (`fence` is set on every leased job).
 */
export type DeletedJobRow = Pick<JobRow, 'run_id' | 'pipeline' | 'stage' | 'kind' | 'idempotency_key' | 'tenant' | 'trace_id' | 'attempt' | 'started_at'> & {
  fence: number;
};

/** A raw row of SELECT_SUCCEEDED_OUTPUTS: run id, stage, output JSON. */
type StageOutputValues = [runId: string, stage: string, output: string];
type ReapedRow = Pick<JobRow, 'run_id' | 'stage' | 'kind' | 'queue' | 'started_at'>;
type RunStatusRow = Pick<RunRow, 'status'>;

/** Statements on runs, stage records, the ledger and fences. */
function prepareRunStatements(db: SqliteDatabase) {
  return {
    selectRun: db.prepare<[string], RunRow>(SELECT_RUN),
    selectRunByIdempotencyKey: db.prepare<[string, string], RunRow>(SELECT_RUN_BY_IDEMPOTENCY_KEY),
    selectRunsByIds: db.prepare<[string], unknown[]>(SELECT_RUNS_BY_IDS).raw(true),
    countTenantInFlight: db.prepare<[string | null, number], { n: number }>(COUNT_TENANT_IN_FLIGHT),
    countQueueBacklog: db.prepare<[string, number], { n: number }>(COUNT_QUEUE_BACKLOG),
    selectNewerSubjectRun: db.prepare<[string, string, number], RunRow>(SELECT_NEWER_SUBJECT_RUN),
    selectOlderLiveSubjectRuns: db.prepare<[string, string, number], RunRow>(SELECT_OLDER_LIVE_SUBJECT_RUNS),
    insertRun: db.prepare<RunRow>(INSERT_RUN),
    updateRunState: db.prepare<RunStateParams>(UPDATE_RUN_STATE),
    selectRunStatus: db.prepare<[id: string], RunStatusRow>(SELECT_RUN_STATUS),
    touchRun: db.prepare<{ id: string; now: number }, RunStatusRow>(TOUCH_RUN),
    finishRun: db.prepare<{ id: string; status: RunStatus; now: number }>(FINISH_RUN),
    markRunRunning: db.prepare<[number, string]>(MARK_RUN_RUNNING),

    insertStages: preparedPerValue((count: number) => db.prepare<(string | number)[]>(insertStagesSql(count))),
    selectSucceededOutputs: db.prepare<[string], StageOutputValues>(SELECT_SUCCEEDED_OUTPUTS).raw(true),
    setStageProgress: db.prepare<{ run_id: string; stage: string; progress: string }>(SET_STAGE_PROGRESS),
    succeedStage: db.prepare<SucceedStageParams>(SUCCEED_STAGE),
    failStage: db.prepare<FailStageParams>(FAIL_STAGE),
    setRollbackStatus: db.prepare<[RollbackStatus, string, string]>(SET_ROLLBACK_STATUS),
    releaseStage: db.prepare<[number | null, string, string]>(RELEASE_STAGE),
    reapStage: db.prepare<[number | null, string, string]>(REAP_STAGE),
    skipUnfinishedStages: db.prepare<[string]>(SKIP_UNFINISHED_STAGES),

    insertLedger: db.prepare<InsertLedgerParams>(INSERT_LEDGER),
    insertFailedAttempt: db.prepare<InsertFailedAttemptParams>(INSERT_FAILED_ATTEMPT),
    selectLedgerOutputs: db.prepare<[string], { key: string; output: string }>(SELECT_LEDGER_OUTPUTS),
    selectPausedQueues: db.prepare<[], { name: string }>(SELECT_PAUSED_QUEUES),
    takeFences: db.prepare<[number], { value: number }>(TAKE_FENCES),
  };
}

/** Parameters of the per-tenant picks. */
type TenantPick = { queue: string; tenant: string | null; now: number };

/** Prepares the statements of the job path; the schema must be migrated first. */
export function prepareJobsStatements(db: SqliteDatabase) {
  return {
    ...prepareRunStatements(db),
    insertJob: db.prepare<InsertJobParams>(INSERT_JOB),
    selectJob: db.prepare<[string], JobRow>(SELECT_JOB),
    // Read raw (see RAW_JOB): better-sqlite3's typings have no raw-row mode, hence `unknown[]`.
    selectReadyTenants: db.prepare<{ queue: string }, { tenant: string | null }>(SELECT_READY_TENANTS),
    pickTenantReady: preparedPerValue((limit: number) => db.prepare<TenantPick, unknown[]>(pickTenantReadySql(limit, 'all')).raw(true)),
    pickTenantReadyWithExpired: preparedPerValue((limit: number) => db.prepare<TenantPick, unknown[]>(pickTenantReadySql(limit, 'withExpired')).raw(true)),
    pickTenantFirstAttempts: preparedPerValue((limit: number) => db.prepare<TenantPick, unknown[]>(pickTenantReadySql(limit, 'firstAttempts')).raw(true)),
    pickExpired: preparedPerValue((limit: number) => db.prepare<{ queue: string; now: number }, unknown[]>(pickRetriesSql(limit, false)).raw(true)),
    pickRetries: preparedPerValue((limit: number) => db.prepare<{ queue: string; now: number }, unknown[]>(pickRetriesSql(limit, true)).raw(true)),
    countRetriesRunning: db.prepare<{ queue: string; now: number }, { n: number }>(COUNT_RETRIES_RUNNING),
    leaseJob: db.prepare<LeaseJobParams>(LEASE_JOB),
    renewJob: db.prepare<[number, string]>(RENEW_JOB),
    deleteLeasedJob: db.prepare<[id: string, token: string, now: number], DeletedJobRow>(DELETE_LEASED_JOB),
    unleaseJob: db.prepare<UnleaseJobParams>(UNLEASE_JOB),
    reapExpired: db.prepare<[number], ReapedRow>(REAP_EXPIRED),
    retireJobsOfRun: db.prepare<[number, string]>(RETIRE_JOBS_OF_RUN),
    deleteJobsOfRun: db.prepare<[string]>(DELETE_JOBS_OF_RUN),
    selectRetiredJobRunStatus: db.prepare<[string], RunStatusRow>(SELECT_RETIRED_JOB_RUN_STATUS),
  };
}
