/**
 * The `reads` sub-port: runs, jobs, queues, the ledger and failed attempts as operators and the
 * API list them. Nothing here changes the store.
 */
import type { FailedAttempt, Job, LedgerEntry, QueueStats, Run, RunStatus, StageRecord } from '../model.ts';

/**
 * Filter for {@link ReadsPort.listRuns}; newest first. Paging is by keyset (`before` = the last
 * id of the previous page), so a deep page costs what the first one does.
 */
export interface ListRunsQuery {
  pipeline?: string;
  status?: RunStatus;
  /** Only runs of this subject (e.g. every version of one asset). */
  subjectId?: string;
  /** Only runs of this tenant. */
  tenant?: string;
  /** Only runs created at or after this time (epoch ms, store clock). */
  createdAfter?: number;
  /** Only runs created before this time (epoch ms, store clock). */
  createdBefore?: number;
  /** Only runs with an id lower than this (pagination). */
  before?: string;
  limit: number;
}

/** Filter for {@link ReadsPort.listJobs}; oldest first. */
export interface ListJobsQuery {
  queue?: string;
  runId?: string;
  state?: Job['state'];
  /** Only jobs of this tenant (the tenant of their run). */
  tenant?: string;
  limit: number;
}

/** Filter for {@link ReadsPort.listDeadLetters}; newest first (by job id), paged by `before`. */
export interface ListDeadLettersQuery {
  /** Only jobs whose last error has this code. */
  code?: string;
  queue?: string;
  /** Only jobs of this tenant (the tenant of their run). */
  tenant?: string;
  /** Only jobs with an id lower than this (pagination). */
  before?: string;
  limit: number;
}

/** A run with its stage records in pipeline order. */
export interface RunDetail {
  run: Run;
  stages: StageRecord[];
}

/** Read-only views; each method is one consistent read. */
export interface ReadsPort {
  getRun(runId: string): Promise<RunDetail | null>;
  listRuns(query: ListRunsQuery): Promise<Run[]>;
  getJob(jobId: string): Promise<Job | null>;
  listJobs(query: ListJobsQuery): Promise<Job[]>;
  /** Every queue that has jobs or was paused, by name. */
  queueStats(): Promise<QueueStats[]>;
  /** Ledger entries of a run, in completion order. */
  readLedger(runId: string): Promise<LedgerEntry[]>;
  /** Failed attempts of a run (stage and rollback jobs), in the order they were committed. */
  listAttempts(runId: string): Promise<FailedAttempt[]>;
  /**
   * Dead letters: the `dead` stage jobs of `dead_lettered` runs (what `OperatorPort.replayJob`
   * may make ready again), newest first. Jobs of runs that failed permanently are not listed.
   */
  listDeadLetters(query: ListDeadLettersQuery): Promise<Job[]>;
}
