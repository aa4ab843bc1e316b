/**
 * Every statement of the backend, prepared once per connection (the hot path never re-parses
 * SQL) and typed with its parameters and row shape.
 */
import type { JobKind, JobState, RollbackStatus, RunStatus, StageStatus } from '../../core/model.ts';
import type { SqliteDatabase } from './connection.ts';
import * as Q from './queries.ts';
import type { JobRow, LedgerRow, RunRow, StageRow } from './rows.ts';

/** Values bound by `UPDATE_RUN_STATE`. */
export interface RunStateParams {
  id: string;
  status: RunStatus;
  current_stage: string | null;
  error: string | null;
  finished_at: number | null;
  updated_at: number;
}

/** Values bound by `INSERT_JOB`. */
export interface InsertJobParams {
  id: string;
  run_id: string;
  pipeline: string;
  stage: string;
  queue: string;
  kind: JobKind;
  idempotency_key: string;
  max_attempts: number;
  priority: number;
  available_at: number;
  enqueued_at: number;
  tenant: string | null;
  trace_id: string | null;
}

/** Values bound by `UNLEASE_JOB`. */
export interface UnleaseJobParams {
  id: string;
  state: JobState;
  available_at: number;
  attempt: number;
  last_error: string | null;
}

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

/** Columns named after the domain, for statements that read only a few of them. */
type StageOutputRow = Pick<StageRow, 'run_id' | 'stage'> & { output: string };
type ReapedRow = Pick<JobRow, 'run_id' | 'stage' | 'kind' | 'queue'>;

/** Prepares every statement; the schema must be migrated first. */
// The return type is inferred on purpose: it is the typed catalogue the operations use.
export function prepareStatements(db: SqliteDatabase) {
  return {
    selectRun: db.prepare<[string], RunRow>(Q.SELECT_RUN),
    selectRunByIdempotencyKey: db.prepare<[string, string], RunRow>(Q.SELECT_RUN_BY_IDEMPOTENCY_KEY),
    selectRunsByIds: db.prepare<[string], RunRow>(Q.SELECT_RUNS_BY_IDS),
    selectNewerSubjectRun: db.prepare<[string, string, number], RunRow>(Q.SELECT_NEWER_SUBJECT_RUN),
    selectOlderLiveSubjectRuns: db.prepare<[string, string, number], RunRow>(Q.SELECT_OLDER_LIVE_SUBJECT_RUNS),
    insertRun: db.prepare<RunRow>(Q.INSERT_RUN),
    updateRunState: db.prepare<RunStateParams>(Q.UPDATE_RUN_STATE),
    markRunRunning: db.prepare<[number, string]>(Q.MARK_RUN_RUNNING),
    listRuns: db.prepare<{ pipeline: string | null; status: RunStatus | null; before: string | null; limit: number }, RunRow>(
      Q.LIST_RUNS,
    ),

    insertStage: db.prepare<[string, string, number]>(Q.INSERT_STAGE),
    selectStagesOfRun: db.prepare<[string], StageRow>(Q.SELECT_STAGES_OF_RUN),
    selectSucceededOutputs: db.prepare<[string], StageOutputRow>(Q.SELECT_SUCCEEDED_OUTPUTS),
    claimStage: db.prepare<{ run_id: string; stage: string; owner: string; lease_until: number; now: number }>(Q.CLAIM_STAGE),
    renewStage: db.prepare<{ run_id: string; stage: string; lease_until: number; set_progress: 0 | 1; progress: string | null }>(
      Q.RENEW_STAGE,
    ),
    succeedStage: db.prepare<{ run_id: string; stage: string; output: string; now: number; duration_ms: number }>(
      Q.SUCCEED_STAGE,
    ),
    failStage: db.prepare<{
      run_id: string;
      stage: string;
      status: StageStatus;
      error: string;
      duration_ms: number;
      finished_at: number | null;
    }>(Q.FAIL_STAGE),
    setRollbackStatus: db.prepare<[RollbackStatus, string, string]>(Q.SET_ROLLBACK_STATUS),
    releaseStage: db.prepare<[string, string]>(Q.RELEASE_STAGE),
    clearStageLease: db.prepare<[string, string]>(Q.CLEAR_STAGE_LEASE),
    resetStage: db.prepare<[string, string]>(Q.RESET_STAGE),
    skipUnfinishedStages: db.prepare<[string]>(Q.SKIP_UNFINISHED_STAGES),
    selectAnyRollback: db.prepare<[string], { found: 1 }>(Q.SELECT_ANY_ROLLBACK),

    insertJob: db.prepare<InsertJobParams, { id: string }>(Q.INSERT_JOB),
    selectJob: db.prepare<[string], JobRow>(Q.SELECT_JOB),
    pickClaimable: db.prepare<{ queue: string; now: number; limit: number }, { id: string }>(Q.PICK_CLAIMABLE),
    leaseJob: db.prepare<
      { id: string; owner: string; token: string; fence: number; lease_until: number; lease_ms: number },
      JobRow
    >(Q.LEASE_JOB),
    renewJob: db.prepare<[number, string]>(Q.RENEW_JOB),
    unleaseJob: db.prepare<UnleaseJobParams>(Q.UNLEASE_JOB),
    reapExpired: db.prepare<[number], ReapedRow>(Q.REAP_EXPIRED),
    deleteJob: db.prepare<[string]>(Q.DELETE_JOB),
    retireJobsOfRun: db.prepare<[number, string]>(Q.RETIRE_JOBS_OF_RUN),
    deleteJobsOfRun: db.prepare<[string]>(Q.DELETE_JOBS_OF_RUN),
    selectRetiredJobRunStatus: db.prepare<[string], { status: RunStatus }>(Q.SELECT_RETIRED_JOB_RUN_STATUS),
    selectReadyJobsOfQueue: db.prepare<[string], { id: string; run_id: string }>(Q.SELECT_READY_JOBS_OF_QUEUE),
    selectParkedJobsOfRun: db.prepare<[string], JobRow>(Q.SELECT_PARKED_JOBS_OF_RUN),
    selectOtherLiveJobWithKey: db.prepare<[string, string], { id: string }>(Q.SELECT_OTHER_LIVE_JOB_WITH_KEY),
    listJobs: db.prepare<{ queue: string | null; run_id: string | null; state: JobState | null; limit: number }, JobRow>(
      Q.LIST_JOBS,
    ),
    queueJobCounts: db.prepare<{ now: number }, QueueCountRow>(Q.QUEUE_JOB_COUNTS),

    insertLedger: db.prepare<[string, string, string, JobKind, string, number]>(Q.INSERT_LEDGER),
    selectLedgerOutputs: db.prepare<[string], { key: string; output: string }>(Q.SELECT_LEDGER_OUTPUTS),
    selectLedgerOfRun: db.prepare<[string], LedgerRow>(Q.SELECT_LEDGER_OF_RUN),
    selectQueuePaused: db.prepare<[string], { paused: 0 | 1 }>(Q.SELECT_QUEUE_PAUSED),
    upsertQueue: db.prepare<[string, 0 | 1, number]>(Q.UPSERT_QUEUE),
    selectQueues: db.prepare<[], { name: string; paused: 0 | 1 }>(Q.SELECT_QUEUES),
    takeFences: db.prepare<[number], { value: number }>(Q.TAKE_FENCES),
  };
}

/** The prepared statements of one connection. */
export type Statements = ReturnType<typeof prepareStatements>;
