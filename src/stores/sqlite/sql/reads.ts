/**
 * The SQL of the `reads` sub-port: runs, stage records, jobs, queues and the ledger as operators
 * and the API list them. Nothing here writes. Single rows by id (`selectRun`, `selectJob`) are
 * the job path's lookups (`sql/jobs.ts`), shared.
 */
import type { JobState, RunStatus } from '../../../core/model.ts';
import { preparedPerValue, type SqliteDatabase } from '../connection.ts';
import type { FailedAttemptRow, JobRow, LedgerRow, RunRow, StageRow } from '../rows.ts';
import { runColumns } from './run-columns.ts';

// ---------------------------------------------------------------- runs

/** Statuses runs_status indexes (migration 0001): the ones an operator looks for. */
const INDEXED_STATUSES: ReadonlySet<RunStatus> = new Set(['failed', 'dead_lettered', 'cancelled', 'superseded', 'parked']);

/**
 * How a run listing finds its rows: within one subject (runs_subject_id, migration 0004) or one
 * tenant (runs_tenant, migration 0008), within one status that runs_status holds (the status a
 * literal, so SQLite can prove the partial index applies), or walking the table newest first.
 */
export type RunListingPath = 'subject' | 'tenant' | 'table' | RunStatus;

/** The path for a query: the narrowest index its filters allow (a subject has few runs, a tenant fewer than all). */
export function runListingPath(query: { subjectId?: string; tenant?: string; status?: RunStatus }): RunListingPath {
  if (query.subjectId !== undefined) return 'subject';
  if (query.tenant !== undefined) return 'tenant';
  if (query.status !== undefined && INDEXED_STATUSES.has(query.status)) return query.status;
  return 'table';
}

/**
 * In: optional pipeline, status, subject, tenant, created_after, created_before (NULL = any),
 * the id range [id_from, before), limit. Out: runs newest first (ids sort by creation time),
 * found along `path` (see {@link RunListingPath}); the range comes from the `before` cursor and
 * the creation-time window (stores/shared/run-window.ts), so the walk starts and stops near the
 * window. Every other filter is checked row by row.
 */
export function listRunsSql(path: RunListingPath): string {
  let index = '';
  let status = '(@status IS NULL OR status = @status)';
  let subject = '(@subject_id IS NULL OR subject_id = @subject_id)';
  let tenant = '(@tenant IS NULL OR tenant = @tenant)';
  // The driving column is compared plainly: SQLite uses a partial index only when the WHERE
  // clause implies the index's own condition.
  if (path === 'subject') [index, subject] = ['INDEXED BY runs_subject_id', 'subject_id = @subject_id'];
  else if (path === 'tenant') [index, tenant] = ['INDEXED BY runs_tenant', 'tenant = @tenant'];
  else if (path !== 'table') {
    if (!INDEXED_STATUSES.has(path)) throw new RangeError(`run status ${path} has no index`);
    [index, status] = ['INDEXED BY runs_status', `status = '${path}'`];
  }
  return `
  SELECT ${runColumns('r')} FROM runs AS r ${index}
  WHERE id < @before AND id >= @id_from AND ${status} AND ${subject} AND ${tenant}
    AND (@pipeline IS NULL OR pipeline = @pipeline)
    AND (@created_after IS NULL OR created_at >= @created_after) AND (@created_before IS NULL OR created_at < @created_before)
  ORDER BY id DESC LIMIT @limit`;
}

/** In: run id. Out: its stage records as read (leases from the live jobs, migration 0015), in pipeline order. */
export const SELECT_STAGES_OF_RUN = 'SELECT * FROM stage_records_live WHERE run_id = ? ORDER BY stage_index';

/** In: run id. Out: its ledger entries in completion order. */
export const SELECT_LEDGER_OF_RUN = 'SELECT * FROM ledger WHERE run_id = ? ORDER BY seq';

/** In: run id. Out: its failed attempts in commit order (failed_attempts, migration 0008). */
export const SELECT_ATTEMPTS_OF_RUN = 'SELECT * FROM failed_attempts WHERE run_id = ? ORDER BY seq';

/**
 * In: optional error code and queue (NULL = any), ids below `before`, limit. Out: the dead stage
 * jobs of dead_lettered runs, newest first. SQLite walks either the jobs table from its newest end
 * or the dead_lettered runs (runs_status) and their jobs (jobs_run_key), whichever it finds
 * cheaper: both hold few rows next to the runs table.
 */
export const LIST_DEAD_LETTERS = `
  SELECT j.* FROM jobs j JOIN runs r ON r.id = j.run_id
  WHERE j.state = 'dead' AND j.kind = 'stage' AND r.status = 'dead_lettered' AND j.id < @before
    AND (@queue IS NULL OR j.queue = @queue) AND (@code IS NULL OR j.last_error ->> '$.code' = @code)
    AND (@tenant IS NULL OR j.tenant = @tenant)
  ORDER BY j.id DESC LIMIT @limit`;

// ---------------------------------------------------------------- jobs and queues

/** In: optional filters (NULL = any), limit. Out: jobs oldest first (a scan: jobs holds only live and dead jobs). */
export const LIST_JOBS = `
  SELECT * FROM jobs
  WHERE (@queue IS NULL OR queue = @queue) AND (@state IS NULL OR state = @state) AND (@tenant IS NULL OR tenant = @tenant)
  ORDER BY enqueued_at, id LIMIT @limit`;

/** As {@link LIST_JOBS} for one run, found through jobs_run_key. */
export const LIST_JOBS_OF_RUN = `
  SELECT * FROM jobs
  WHERE run_id = @run_id AND (@queue IS NULL OR queue = @queue) AND (@state IS NULL OR state = @state) AND (@tenant IS NULL OR tenant = @tenant)
  ORDER BY enqueued_at, id LIMIT @limit`;

/** Out: every queue an operator paused or resumed. */
export const SELECT_QUEUES = 'SELECT name, paused FROM queues';

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

/** Per-queue counts from `QUEUE_JOB_COUNTS`. */
export interface QueueCountRow {
  queue: string;
  ready: number;
  scheduled: number;
  leased: number;
  parked: number;
  dead: number;
  oldest_ready_at: number | null;
}

/** Values bound by {@link listRunsSql}. */
export interface ListRunsParams {
  pipeline: string | null;
  status: RunStatus | null;
  subject_id: string | null;
  tenant: string | null;
  created_after: number | null;
  created_before: number | null;
  id_from: string;
  before: string;
  limit: number;
}
type ListJobsParams = { queue: string | null; state: JobState | null; limit: number };

/** Prepares the read-only statements; the schema must be migrated first. */
export function prepareReadsStatements(db: SqliteDatabase) {
  return {
    listRuns: preparedPerValue((path: RunListingPath) => db.prepare<ListRunsParams, RunRow>(listRunsSql(path))),
    selectStagesOfRun: db.prepare<[string], StageRow>(SELECT_STAGES_OF_RUN),
    selectLedgerOfRun: db.prepare<[string], LedgerRow>(SELECT_LEDGER_OF_RUN),
    selectAttemptsOfRun: db.prepare<[string], FailedAttemptRow>(SELECT_ATTEMPTS_OF_RUN),
    listDeadLetters: db.prepare<{ code: string | null; queue: string | null; tenant: string | null; before: string; limit: number }, JobRow>(LIST_DEAD_LETTERS),
    listJobs: db.prepare<ListJobsParams, JobRow>(LIST_JOBS),
    listJobsOfRun: db.prepare<ListJobsParams & { run_id: string }, JobRow>(LIST_JOBS_OF_RUN),
    selectQueues: db.prepare<[], { name: string; paused: 0 | 1 }>(SELECT_QUEUES),
    queueJobCounts: db.prepare<{ now: number }, QueueCountRow>(QUEUE_JOB_COUNTS),
  };
}
