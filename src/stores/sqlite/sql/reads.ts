/**
 * The SQL of the `reads` sub-port: runs, stage records, jobs, queues and the ledger as operators
 * and the API list them. Nothing here writes. Single rows by id (`selectRun`, `selectJob`) are
 * the job path's lookups (`sql/jobs.ts`), shared.
 */
import { RunStatus, type JobState } from '../../../core/model.ts';
import { preparedPerValue, type SqliteDatabase } from '../connection.ts';
import type { JobRow, LedgerRow, RunRow, StageRow } from '../rows.ts';

// ---------------------------------------------------------------- runs

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

/** In: run id. Out: its stage records in pipeline order. */
export const SELECT_STAGES_OF_RUN = 'SELECT * FROM stage_records WHERE run_id = ? ORDER BY stage_index';

/** In: run id. Out: its ledger entries in completion order. */
export const SELECT_LEDGER_OF_RUN = 'SELECT * FROM ledger WHERE run_id = ? ORDER BY seq';

// ---------------------------------------------------------------- jobs and queues

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

type ListRunsParams = { pipeline: string | null; before: string; limit: number };
type ListJobsParams = { queue: string | null; state: JobState | null; limit: number };

/** Prepares the read-only statements; the schema must be migrated first. */
export function prepareReadsStatements(db: SqliteDatabase) {
  return {
    listRuns: db.prepare<ListRunsParams, RunRow>(LIST_RUNS),
    listRunsByStatus: preparedPerValue((status: RunStatus) => db.prepare<ListRunsParams, RunRow>(listRunsByStatusSql(status))),
    listRunsOfSubject: db.prepare<ListRunsParams & { subject_id: string; status: RunStatus | null }, RunRow>(LIST_RUNS_OF_SUBJECT),
    selectStagesOfRun: db.prepare<[string], StageRow>(SELECT_STAGES_OF_RUN),
    selectLedgerOfRun: db.prepare<[string], LedgerRow>(SELECT_LEDGER_OF_RUN),
    listJobs: db.prepare<ListJobsParams, JobRow>(LIST_JOBS),
    listJobsOfRun: db.prepare<ListJobsParams & { run_id: string }, JobRow>(LIST_JOBS_OF_RUN),
    selectQueues: db.prepare<[], { name: string; paused: 0 | 1 }>(SELECT_QUEUES),
    queueJobCounts: db.prepare<{ now: number }, QueueCountRow>(QUEUE_JOB_COUNTS),
  };
}
