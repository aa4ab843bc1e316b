/**
 * Every statement of the store, prepared once per connection (the hot path never re-parses
 * SQL) and typed with its parameters and row shape. Statements whose text depends on a number
 * (claim limit, stage count) are prepared on first use of each value and kept.
 */
import type { JobKind, JobState, RollbackStatus, RunStatus, StageStatus } from '../../core/model.ts';
import type { SqliteDatabase } from './connection.ts';
import * as A from './artifact-ref-queries.ts';
import * as C from './cache-queries.ts';
import * as J from './job-queries.ts';
import * as P from './publication-queries.ts';
import * as Q from './queries.ts';
import * as R from './request-queries.ts';
import * as V from './version-counter-queries.ts';
import type { PublicationRow } from '../shared/row-mapping.ts';
import type { CacheEntryRow, JobRow, LedgerRow, RequestRecordRow, RunRow, StageRow } from './rows.ts';

/** Values bound by `UPDATE_RUN_STATE`. */
export interface RunStateParams {
  id: string;
  status: RunStatus;
  current_stage: string | null;
  error: string | null;
  finished_at: number | null;
  updated_at: number;
}

/** Values bound by `INSERT_JOB`: the columns a new job is given (the rest take their defaults). */
export type InsertJobParams = Pick<
  JobRow,
  'id' | 'run_id' | 'pipeline' | 'stage' | 'queue' | 'kind' | 'idempotency_key' | 'max_attempts' | 'priority' | 'available_at' | 'enqueued_at' | 'tenant' | 'trace_id'
>;

/** Values bound by `LEASE_JOB`. */
export type LeaseJobParams = Pick<JobRow, 'id' | 'attempt' | 'redeliveries'> & {
  owner: string;
  token: string;
  fence: number;
  lease_until: number;
  lease_ms: number;
};

/** Values bound by `UNLEASE_JOB`. */
export interface UnleaseJobParams {
  id: string;
  state: JobState;
  available_at: number;
  attempt: number;
  last_error: string | null;
}

/** Values bound by `INSERT_LEDGER`. */
export interface InsertLedgerParams {
  run_id: string;
  key: string;
  stage: string;
  kind: JobKind;
  output: string;
  now: number;
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

/**
 * What a fenced delete returns: enough to write the ledger, enqueue the next job and fence the
 * item's publications (`fence` is set on every leased job).
 */
export type DeletedJobRow = Pick<JobRow, 'run_id' | 'pipeline' | 'stage' | 'kind' | 'idempotency_key' | 'tenant' | 'trace_id'> & {
  fence: number;
};

/** Values bound by `COMPLETE_CACHE_ENTRY`. */
export interface CompleteCacheParams {
  cache: string;
  key: string;
  token: string;
  value: string;
  expires_at: number;
  stale_until: number | null;
  now: number;
}

/** Values bound by `FAIL_CACHE_ENTRY`. */
export interface FailCacheParams {
  cache: string;
  key: string;
  token: string;
  error: string;
  expires_at: number;
  now: number;
}

/** Values bound by `PUBLISH`. */
export type PublishParams = Omit<PublicationRow, 'updated_at'> & { now: number };

/** Columns named after the domain, for statements that read only a few of them. */
type StageOutputRow = Pick<StageRow, 'run_id' | 'stage'> & { output: string };
type ReapedRow = Pick<JobRow, 'run_id' | 'stage' | 'kind' | 'queue'>;
type ListRunsParams = { pipeline: string | null; before: string; limit: number };
type ListJobsParams = { queue: string | null; state: JobState | null; limit: number };

/** A statement prepared on first use of each value its text depends on (a few values each). */
function preparedPerValue<K, S>(prepare: (value: K) => S): (value: K) => S {
  const cache = new Map<K, S>();
  return (value) => {
    let statement = cache.get(value);
    if (statement === undefined) cache.set(value, (statement = prepare(value)));
    return statement;
  };
}

/** Statements on runs, stage records, the ledger, queues and fences. */
function prepareRunStatements(db: SqliteDatabase) {
  return {
    selectRun: db.prepare<[string], RunRow>(Q.SELECT_RUN),
    selectRunByIdempotencyKey: db.prepare<[string, string], RunRow>(Q.SELECT_RUN_BY_IDEMPOTENCY_KEY),
    selectRunsByIds: db.prepare<[string], RunRow>(Q.SELECT_RUNS_BY_IDS),
    selectNewerSubjectRun: db.prepare<[string, string, number], RunRow>(Q.SELECT_NEWER_SUBJECT_RUN),
    selectOlderLiveSubjectRuns: db.prepare<[string, string, number], RunRow>(Q.SELECT_OLDER_LIVE_SUBJECT_RUNS),
    insertRun: db.prepare<RunRow>(Q.INSERT_RUN),
    updateRunState: db.prepare<RunStateParams>(Q.UPDATE_RUN_STATE),
    moveRunToStage: db.prepare<{ id: string; stage: string; now: number }, Pick<RunRow, 'status'>>(Q.MOVE_RUN_TO_STAGE),
    touchRun: db.prepare<{ id: string; now: number }, Pick<RunRow, 'status'>>(Q.TOUCH_RUN),
    finishRun: db.prepare<{ id: string; status: RunStatus; now: number }>(Q.FINISH_RUN),
    markRunRunning: db.prepare<[number, string]>(Q.MARK_RUN_RUNNING),
    listRuns: db.prepare<ListRunsParams, RunRow>(Q.LIST_RUNS),
    listRunsByStatus: preparedPerValue((status: RunStatus) => db.prepare<ListRunsParams, RunRow>(Q.listRunsByStatusSql(status))),
    listRunsOfSubject: db.prepare<ListRunsParams & { subject_id: string; status: RunStatus | null }, RunRow>(Q.LIST_RUNS_OF_SUBJECT),

    insertStages: preparedPerValue((count: number) => db.prepare<(string | number)[]>(Q.insertStagesSql(count))),
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

    insertLedger: db.prepare<InsertLedgerParams>(Q.INSERT_LEDGER),
    selectLedgerOutputs: db.prepare<[string], { key: string; output: string }>(Q.SELECT_LEDGER_OUTPUTS),
    selectLedgerOfRun: db.prepare<[string], LedgerRow>(Q.SELECT_LEDGER_OF_RUN),
    selectPausedQueues: db.prepare<[], { name: string }>(Q.SELECT_PAUSED_QUEUES),
    upsertQueue: db.prepare<[string, 0 | 1, number]>(Q.UPSERT_QUEUE),
    selectQueues: db.prepare<[], { name: string; paused: 0 | 1 }>(Q.SELECT_QUEUES),
    takeFences: db.prepare<[number], { value: number }>(Q.TAKE_FENCES),
  };
}

/** Statements on jobs and retired jobs. */
function prepareJobStatements(db: SqliteDatabase) {
  return {
    insertJob: db.prepare<InsertJobParams>(J.INSERT_JOB),
    selectJob: db.prepare<[string], JobRow>(J.SELECT_JOB),
    // Read raw (see JOB_COLUMNS): better-sqlite3's typings have no raw-row mode, hence `unknown[]`.
    pickClaimable: preparedPerValue((limit: number) => db.prepare<{ queue: string; now: number }, unknown[]>(J.pickClaimableSql(limit)).raw(true)),
    leaseJob: db.prepare<LeaseJobParams>(J.LEASE_JOB),
    renewJob: db.prepare<[number, string]>(J.RENEW_JOB),
    deleteLeasedJob: db.prepare<{ id: string; token: string; now: number }, DeletedJobRow>(J.DELETE_LEASED_JOB),
    unleaseJob: db.prepare<UnleaseJobParams>(J.UNLEASE_JOB),
    reapExpired: db.prepare<[number], ReapedRow>(J.REAP_EXPIRED),
    retireJobsOfRun: db.prepare<[number, string]>(J.RETIRE_JOBS_OF_RUN),
    deleteJobsOfRun: db.prepare<[string]>(J.DELETE_JOBS_OF_RUN),
    selectRetiredJobRunStatus: db.prepare<[string], Pick<RunRow, 'status'>>(J.SELECT_RETIRED_JOB_RUN_STATUS),
    selectReadyJobsOfQueue: db.prepare<[string], Pick<JobRow, 'id' | 'run_id'>>(J.SELECT_READY_JOBS_OF_QUEUE),
    selectParkedJobsOfRun: db.prepare<[string], JobRow>(J.SELECT_PARKED_JOBS_OF_RUN),
    selectOtherLiveJobWithKey: db.prepare<[string, string, string], { id: string }>(J.SELECT_OTHER_LIVE_JOB_WITH_KEY),
    listJobs: db.prepare<ListJobsParams, JobRow>(J.LIST_JOBS),
    listJobsOfRun: db.prepare<ListJobsParams & { run_id: string }, JobRow>(J.LIST_JOBS_OF_RUN),
    queueJobCounts: db.prepare<{ now: number }, QueueCountRow>(J.QUEUE_JOB_COUNTS),
  };
}

/** Statements on cache entries, publications, remembered requests, version counters and artifact refs. */
function prepareRecordStatements(db: SqliteDatabase) {
  type CacheKeyParams = [cache: string, key: string];
  return {
    selectCacheEntry: db.prepare<CacheKeyParams, CacheEntryRow>(C.SELECT_CACHE_ENTRY),
    upsertCacheEntry: db.prepare<CacheEntryRow>(C.UPSERT_CACHE_ENTRY),
    completeCacheEntry: db.prepare<CompleteCacheParams>(C.COMPLETE_CACHE_ENTRY),
    failCacheEntry: db.prepare<FailCacheParams>(C.FAIL_CACHE_ENTRY),
    deleteBuildingCacheEntry: db.prepare<[...CacheKeyParams, token: string]>(C.DELETE_BUILDING_CACHE_ENTRY),
    releaseRevalidation: db.prepare<[now: number, ...CacheKeyParams, token: string]>(C.RELEASE_REVALIDATION),
    renewCacheLease: db.prepare<{ cache: string; key: string; token: string; builder_until: number; now: number }>(C.RENEW_CACHE_LEASE),
    deleteExpiredCacheEntries: db.prepare<{ now: number; grace_ms: number }>(C.DELETE_EXPIRED_CACHE_ENTRIES),

    selectPublication: db.prepare<[subjectId: string, profile: string], PublicationRow>(P.SELECT_PUBLICATION),
    selectPublicationsOfSubject: db.prepare<[subjectId: string], PublicationRow>(P.SELECT_PUBLICATIONS_OF_SUBJECT),
    deletePublicationsOfSubject: db.prepare<[subjectId: string]>(P.DELETE_PUBLICATIONS_OF_SUBJECT),
    deletePublicationProfiles: db.prepare<[subjectId: string, profilesJson: string]>(P.DELETE_PUBLICATION_PROFILES),
    publish: db.prepare<PublishParams>(P.PUBLISH),

    allocateVersion: db.prepare<{ scope: string; key: string; now: number }, { value: number }>(V.ALLOCATE_VERSION),
    // Plucked: each row is its one TEXT column.
    selectPublishedArtifactRefs: db.prepare<[], string>(A.SELECT_PUBLISHED_ARTIFACT_REFS).pluck(),
    selectCacheValuesWithRefs: db.prepare<[], string>(A.SELECT_CACHE_VALUES_WITH_REFS).pluck(),
    selectReplayableRunJson: db.prepare<[], string>(A.SELECT_REPLAYABLE_RUN_JSON).pluck(),

    insertRequestRecord: db.prepare<Omit<RequestRecordRow, 'created_at'> & { now: number }>(R.INSERT_REQUEST_RECORD),
    selectRequestRecord: db.prepare<[scope: string, key: string], RequestRecordRow>(R.SELECT_REQUEST_RECORD),
  };
}

/** Prepares every statement; the schema must be migrated first. */
// The return type is inferred on purpose: it is the typed catalogue the operations use.
export function prepareStatements(db: SqliteDatabase) {
  return { ...prepareRunStatements(db), ...prepareJobStatements(db), ...prepareRecordStatements(db) };
}

/** The prepared statements of one connection. */
export type Statements = ReturnType<typeof prepareStatements>;
