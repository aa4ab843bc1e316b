/**
 * The `operator` sub-port: what an operator does to runs and queues (CLI, HTTP, dashboard).
 */
import type { Job, Run } from '../model.ts';

/** Operator actions; each method is one atomic unit. */
export interface OperatorPort {
  /**
   * Cancels a run that has not ended: run `cancelled` (error code `CANCELLED`, message `reason`),
   * its jobs deleted, stages not yet succeeded become `skipped`. `INVALID_TRANSITION` if it ended;
   * `NotFoundError` if unknown.
   */
  cancelRun(runId: string, reason: string): Promise<Run>;

  /** Parked run -> `running`; its parked job -> `ready` now with `attempt = 0`. `INVALID_TRANSITION` otherwise. */
  resumeRun(runId: string): Promise<Run>;

  /**
   * Dead job of a `dead_lettered` run -> `ready` now with `attempt = 0`; its stage record
   * `pending`; its run `running` with `error = null`. `INVALID_TRANSITION` if the job is not dead
   * or its run ended `failed` (a permanent failure: submit a new run instead), `RUN_COMPENSATED`
   * if a rollback was enqueued for the run; `NotFoundError` if unknown.
   */
  replayJob(jobId: string): Promise<Job>;

  /** Pauses (no claims) or resumes a queue. Queues need not exist before. */
  setQueuePaused(queue: string, paused: boolean): Promise<void>;

  /**
   * Removes every `ready` job of the queue (leased ones finish) and cancels their runs
   * (reason `queue drained`). Returns how many jobs were removed.
   */
  drainQueue(queue: string): Promise<number>;
}
