/**
 * The SQL of the `retention` sub-port: finding runs past their retention period (index
 * runs_finished, migration 0014) and deleting them with their child rows; request records by age
 * (request_records_created).
 */
import type { SqliteDatabase } from '../connection.ts';

/**
 * The conditions that make run `r` prunable once its status and cutoff match: no job that is not
 * dead, and not the highest version of its subject (see `RetentionPort.prune`).
 */
const PRUNABLE = `
  NOT EXISTS (SELECT 1 FROM jobs j WHERE j.run_id = r.id AND j.state <> 'dead')
  AND (r.subject_id IS NULL OR EXISTS (
    SELECT 1 FROM runs o
    WHERE o.pipeline = r.pipeline AND o.subject_id = r.subject_id AND o.subject_version > r.subject_version))`;

/** In: status, cutoff (finished at or before), limit. Out: the oldest prunable runs of that status. */
export const SELECT_EXPIRED_RUNS = `
  SELECT r.id, r.finished_at FROM runs r
  WHERE r.status = @status AND r.finished_at IS NOT NULL AND r.finished_at <= @cutoff AND ${PRUNABLE}
  ORDER BY r.finished_at, r.id
  LIMIT @limit`;

/** In: status, cutoff. Out: how many rows of each kind every prunable run of that status has. */
export const COUNT_EXPIRED_RUNS = `
  SELECT
    count(*) AS runs,
    coalesce(sum((SELECT count(*) FROM stage_records c WHERE c.run_id = r.id)), 0) AS stage_records,
    coalesce(sum((SELECT count(*) FROM ledger c WHERE c.run_id = r.id)), 0) AS ledger_entries,
    coalesce(sum((SELECT count(*) FROM jobs c WHERE c.run_id = r.id)), 0) AS jobs,
    coalesce(sum((SELECT count(*) FROM failed_attempts c WHERE c.run_id = r.id)), 0) AS attempts
  FROM runs r
  WHERE r.status = @status AND r.finished_at IS NOT NULL AND r.finished_at <= @cutoff AND ${PRUNABLE}`;

/** In: cutoff, limit. Deletes the oldest request records created at or before the cutoff. */
export const DELETE_EXPIRED_REQUESTS = `
  DELETE FROM request_records WHERE (scope, key) IN (
    SELECT scope, key FROM request_records WHERE created_at <= @cutoff ORDER BY created_at LIMIT @limit)`;

/** In: cutoff. Out: how many request records were created at or before it. */
export const COUNT_EXPIRED_REQUESTS = 'SELECT count(*) AS n FROM request_records WHERE created_at <= ?';

/** A row of {@link SELECT_EXPIRED_RUNS}. */
export interface ExpiredRunRow {
  id: string;
  finished_at: number;
}

/** A row of {@link COUNT_EXPIRED_RUNS}. */
export interface ExpiredCountRow {
  runs: number;
  stage_records: number;
  ledger_entries: number;
  jobs: number;
  attempts: number;
}

/** Prepares the statements of retention; the schema must be migrated first. */
export function prepareRetentionStatements(db: SqliteDatabase) {
  const byRun = (table: string) => db.prepare<[runId: string]>(`DELETE FROM ${table} WHERE run_id = ?`);
  return {
    selectExpiredRuns: db.prepare<{ status: string; cutoff: number; limit: number }, ExpiredRunRow>(SELECT_EXPIRED_RUNS),
    countExpiredRuns: db.prepare<{ status: string; cutoff: number }, ExpiredCountRow>(COUNT_EXPIRED_RUNS),
    deleteRunStageRecords: byRun('stage_records'),
    deleteRunLedger: byRun('ledger'),
    deleteRunJobs: byRun('jobs'),
    deleteRunAttempts: byRun('failed_attempts'),
    deleteRunRetiredJobs: byRun('retired_jobs'),
    deleteRun: db.prepare<[runId: string]>('DELETE FROM runs WHERE id = ?'),
    deleteExpiredRequests: db.prepare<{ cutoff: number; limit: number }>(DELETE_EXPIRED_REQUESTS),
    countExpiredRequests: db.prepare<[cutoff: number], { n: number }>(COUNT_EXPIRED_REQUESTS),
  };
}
