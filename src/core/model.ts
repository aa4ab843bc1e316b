/**
 * Domain records as the store holds them. Times are epoch milliseconds taken from the store's
 * clock (never a worker's). Everything here is plain JSON-friendly data.
 */
import type { ErrorClass } from './errors.ts';

/** Any JSON value. Stage inputs and outputs are JSON (small references, never large blobs). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Lifecycle of a run. See `core/run/transitions.ts` for the allowed moves. */
export const RunStatus = {
  /** Submitted; its first job waits on a queue. */
  queued: 'queued',
  /**
   * At least one stage job was claimed. Also while the compensations (rollbacks) of a run that
   * failed permanently run: `error` then says why it will end `failed`.
   */
  running: 'running',
  succeeded: 'succeeded',
  /**
   * Ended for good, with `error`: a stage failed permanently (after the compensations of the
   * completed stages, if any), or a dead-lettered run was compensated. Terminal, not replayable:
   * submit a new run.
   */
  failed: 'failed',
  /**
   * A stage job's attempts ran out (transient errors, or its lease kept expiring), so the run may
   * succeed when replayed: `replay` of its dead job continues from that stage.
   */
  dead_lettered: 'dead_lettered',
  cancelled: 'cancelled',
  /** A newer version of the same subject exists; this run can never commit again. */
  superseded: 'superseded',
  /** Waits for an operator (intervention error); `resume` continues from the parked stage. */
  parked: 'parked',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** Statuses a run never leaves on its own. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled', 'superseded'];

/** Status of one stage of one run. */
export const StageStatus = {
  pending: 'pending',
  running: 'running',
  succeeded: 'succeeded',
  /**
   * Failed for now (waiting for a retry, or parked with its run), or for good (a permanent
   * error: the run ends `failed`); `error` says why.
   */
  failed: 'failed',
  /** Its attempts ran out and its run is `dead_lettered`; a replay makes it `pending` again. */
  dead_lettered: 'dead_lettered',
  /** Never ran because the run ended first (cancelled, superseded). */
  skipped: 'skipped',
} as const;
export type StageStatus = (typeof StageStatus)[keyof typeof StageStatus];

/**
 * Progress of a completed stage's compensation, if it has a rollback handler. `dead_lettered`:
 * the compensation failed for good (its attempts ran out, or a permanent error); the chain of
 * compensations stops there.
 */
export const RollbackStatus = { pending: 'pending', succeeded: 'succeeded', dead_lettered: 'dead_lettered' } as const;
export type RollbackStatus = (typeof RollbackStatus)[keyof typeof RollbackStatus];

/** State of a job row on a queue. */
export const JobState = {
  /** Claimable once `availableAt` has passed and the queue is not paused. */
  ready: 'ready',
  /** Held by a worker until `leaseUntil`. */
  leased: 'leased',
  /** Kept for an operator: `resume` makes it ready again. */
  parked: 'parked',
  /**
   * Failed for good and kept for inspection (`lastError`). `replay` makes it ready again while
   * its run is `dead_lettered`; the dead job of a run that ended `failed` is never replayed.
   */
  dead: 'dead',
} as const;
export type JobState = (typeof JobState)[keyof typeof JobState];

/** A stage job runs the stage's handler; a rollback job runs its compensation. */
export const JobKind = { stage: 'stage', rollback: 'rollback' } as const;
export type JobKind = (typeof JobKind)[keyof typeof JobKind];

/** A structured failure, as recorded on stage records and runs. */
export interface StageErrorRecord {
  class: ErrorClass;
  code: string;
  message: string;
}

/** What the engine did with a failed attempt (the `action` of `FailureDecision`, ports/jobs.ts). */
export const FailureAction = { retry: 'retry', park: 'park', dead_letter: 'dead_letter', fail: 'fail' } as const;
export type FailureAction = (typeof FailureAction)[keyof typeof FailureAction];

/**
 * One failed attempt of a job, recorded by the commit that recorded the failure (never on the
 * success path). A run's successful attempts are its stage records and ledger entries.
 */
export interface FailedAttempt {
  runId: string;
  jobId: string;
  stage: string;
  kind: JobKind;
  queue: string;
  /** The job's claim count when it failed (restarts after a replay or a resume). */
  attempt: number;
  /** The lease owner that ran it (a worker id). */
  workerId: string | null;
  error: StageErrorRecord;
  action: FailureAction;
  /** Wall time of the handler. */
  durationMs: number;
  /** When the failure was committed (store clock). */
  failedAt: number;
}

/** One execution of a pipeline for a subject. */
export interface Run {
  id: string;
  pipeline: string;
  pipelineVersion: number;
  status: RunStatus;
  /** Stage the run is at (the one with a live job), or null once it ended. */
  currentStage: string | null;
  input: JsonValue;
  /** sha256 hex of the canonical input. */
  inputChecksum: string;
  /** Client-chosen key that deduplicates submissions. */
  idempotencyKey: string | null;
  subjectId: string | null;
  subjectVersion: number | null;
  tenant: string | null;
  traceId: string | null;
  /**
   * W3C `traceparent` of the span that submitted the run (`00-<trace id>-<span id>-<flags>`):
   * every attempt of every job of the run, in any process, is a child of it. Null for runs
   * submitted before kiln stored it; their attempts continue `traceId` only.
   */
  traceParent: string | null;
  /**
   * Why the run ended badly (permanent failure, dead-letter, cancel reason, supersede), if it did;
   * also set while the compensations of a permanently failed run run.
   */
  error: StageErrorRecord | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

/** One stage of one run. */
export interface StageRecord {
  runId: string;
  stage: string;
  /** Position in the pipeline, from 0. */
  index: number;
  status: StageStatus;
  /** Times a handler was given this stage (claims, including redeliveries). */
  attempts: number;
  output: JsonValue | null;
  error: StageErrorRecord | null;
  /** Last marker passed to `ctx.progress()`. */
  progress: JsonValue | null;
  leaseOwner: string | null;
  leaseUntil: number | null;
  rollbackStatus: RollbackStatus | null;
  startedAt: number | null;
  finishedAt: number | null;
  durationMs: number | null;
}

/** The unit on a stage queue. */
export interface Job {
  id: string;
  runId: string;
  pipeline: string;
  stage: string;
  /** `<pipeline>.<stage>`. */
  queue: string;
  kind: JobKind;
  state: JobState;
  /** The logical effect; at most one live (non-dead) job per key. */
  idempotencyKey: string;
  /** Claims so far, counting the current one. */
  attempt: number;
  maxAttempts: number;
  /** Lower runs first. */
  priority: number;
  availableAt: number;
  enqueuedAt: number;
  tenant: string | null;
  traceId: string | null;
  leaseOwner: string | null;
  leaseToken: string | null;
  /** Monotonic fence issued at claim; larger means a later holder. */
  fence: number | null;
  leaseUntil: number | null;
  /** Lease duration granted at claim and on every renewal. */
  leaseMs: number | null;
  /** Times the job was handed out again after a lease expired. */
  redeliveries: number;
  lastError: StageErrorRecord | null;
  /**
   * Since when the job waits for its stage's lock (store clock): set when it is handed back
   * because the lock was held, cleared by any other hand-back and by the commit of an attempt.
   */
  lockWaitSince: number | null;
}

/** What the ledger remembers of a completed idempotency key. */
export interface LedgerEntry {
  key: string;
  runId: string;
  stage: string;
  kind: JobKind;
  output: JsonValue;
  completedAt: number;
}

/** Depth and age of one queue. */
export interface QueueStats {
  queue: string;
  paused: boolean;
  /** Ready now (available_at passed). */
  ready: number;
  /** Ready but waiting for a backoff to pass. */
  scheduled: number;
  leased: number;
  parked: number;
  dead: number;
  /** Age of the oldest job ready now, 0 when none. */
  oldestReadyAgeMs: number;
}
