/**
 * The `reads` sub-port: runs, jobs, queues and the ledger as operators and the API list them.
 * Nothing here changes the store.
 */
import type { Job, LedgerEntry, QueueStats, Run, RunStatus, StageRecord } from '../model.ts';

/** Filter for {@link ReadsPort.listRuns}; newest first. */
export interface ListRunsQuery {
  pipeline?: string;
  status?: RunStatus;
  /** Only runs of this subject (e.g. every version of one asset). */
  subjectId?: string;
  /** Only runs with an id lower than this (pagination). */
  before?: string;
  limit: number;
}

/** Filter for {@link ReadsPort.listJobs}; oldest first. */
export interface ListJobsQuery {
  queue?: string;
  runId?: string;
  state?: Job['state'];
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
}
