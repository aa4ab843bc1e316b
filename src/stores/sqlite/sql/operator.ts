/**
 * The SQL of the `operator` sub-port: pausing queues, finding the jobs an operator restarts or
 * drains, and the checks a replay makes. The run moves it shares with the job path (`endRun`,
 * `updateRun`) use the statements of `sql/jobs.ts`.
 */
import type { SqliteDatabase } from '../connection.ts';
import type { JobRow } from '../rows.ts';

/** In: queue, paused (0/1), now. */
export const UPSERT_QUEUE = `
  INSERT INTO queues (name, paused, updated_at) VALUES (?, ?, ?)
  ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at`;

/**
 * In: the restarted job's claims to count (a parked job's attempt, 0 for a dead job's, already
 * counted; migration 0015), its first claim, run id, stage. A replayed stage waits again.
 */
export const RESET_STAGE = `
  UPDATE stage_records SET status = 'pending', attempts = attempts + ?, started_at = COALESCE(started_at, ?)
  WHERE run_id = ? AND stage = ?`;

/** In: run id. Out: a row when any compensation was ever enqueued for the run. */
export const SELECT_ANY_ROLLBACK = 'SELECT 1 AS found FROM stage_records WHERE run_id = ? AND rollback_status IS NOT NULL LIMIT 1';

/** In: queue. Out: its ready jobs (any due time). */
export const SELECT_READY_JOBS_OF_QUEUE = "SELECT id, run_id FROM jobs WHERE queue = ? AND state = 'ready'";

/** In: run id. Out: its parked jobs. */
export const SELECT_PARKED_JOBS_OF_RUN = "SELECT * FROM jobs WHERE run_id = ? AND state = 'parked'";

/** In: run id, idempotency key, job id. Out: another live job of the run holding the key. */
export const SELECT_OTHER_LIVE_JOB_WITH_KEY = `
  SELECT id FROM jobs WHERE run_id = ? AND idempotency_key = ? AND dead_slot = '' AND id <> ?`;

/** Prepares the statements of the operator actions; the schema must be migrated first. */
export function prepareOperatorStatements(db: SqliteDatabase) {
  return {
    upsertQueue: db.prepare<[string, 0 | 1, number]>(UPSERT_QUEUE),
    resetStage: db.prepare<[number, number | null, string, string]>(RESET_STAGE),
    selectAnyRollback: db.prepare<[string], { found: 1 }>(SELECT_ANY_ROLLBACK),
    selectReadyJobsOfQueue: db.prepare<[string], Pick<JobRow, 'id' | 'run_id'>>(SELECT_READY_JOBS_OF_QUEUE),
    selectParkedJobsOfRun: db.prepare<[string], JobRow>(SELECT_PARKED_JOBS_OF_RUN),
    selectOtherLiveJobWithKey: db.prepare<[string, string, string], { id: string }>(SELECT_OTHER_LIVE_JOB_WITH_KEY),
  };
}
