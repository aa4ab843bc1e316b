/**
 * The observation port: the engine reports what happened, `src/observe` turns it into metrics.
 * Every method must be cheap and must never throw (it runs on the claim/commit path).
 */
import type { AdmissionCode, ErrorClass } from './errors.ts';
import type { RunStatus } from './model.ts';

/**
 * How one stage execution ended, as counted in `kiln_stage_executions_total{outcome}`:
 * `dead_lettered` when its attempts ran out (replayable), `failed` when it failed permanently
 * (its run ends `failed`), `lease_lost`/`cancelled` when its commit was refused.
 */
export const StageOutcome = {
  succeeded: 'succeeded',
  retried: 'retried',
  dead_lettered: 'dead_lettered',
  failed: 'failed',
  parked: 'parked',
  lease_lost: 'lease_lost',
  cancelled: 'cancelled',
} as const;
export type StageOutcome = (typeof StageOutcome)[keyof typeof StageOutcome];

/** One finished stage execution. */
export interface StageExecution {
  pipeline: string;
  stage: string;
  outcome: StageOutcome;
  durationMs: number;
  /** Set when the handler failed. */
  errorClass?: ErrorClass;
  /** True for rollback (compensation) jobs. */
  rollback: boolean;
  /** The job's attempt (1 for its first claim). */
  attempt?: number;
  /**
   * Set when the outcome was committed: from the job's enqueue to this commit, backoffs, queue
   * waits and earlier attempts included (enqueue-to-done latency when the outcome is `succeeded`).
   */
  sinceEnqueuedMs?: number;
}

/** Receives engine events. */
export interface EngineObserver {
  stageExecuted(e: StageExecution): void;
  /** A job whose idempotency key was already in the ledger was acknowledged without work. */
  idempotentSkip(pipeline: string, stage: string): void;
  /** Jobs handed out again after their lease expired. */
  redelivered(queue: string, count: number): void;
  /** A run reached `status` (submitted runs report `queued`); `tenant` is the run's. */
  runStatus(pipeline: string, status: RunStatus, tenant?: string | null): void;
  /**
   * A run left `running` for good or for an operator (any status but `parked`), `durationMs` after
   * it was submitted.
   */
  runFinished(pipeline: string, status: RunStatus, durationMs: number): void;
  /** Submissions answered with an existing run (same idempotency key). */
  submitDeduplicated(pipeline: string, count: number): void;
  /** A submission (of `count` runs) refused by an admission limit: `code` is the refusal's. */
  submitRefused(pipeline: string, code: AdmissionCode, count: number): void;
  /** A worker claimed `count` jobs of `queue` in one claim. */
  jobsClaimed(queue: string, count: number): void;
  /** A handler ran past its stage's `timeoutMs` and was aborted. */
  stageTimedOut(pipeline: string, stage: string): void;
  /** A heartbeat found the job's lease lost (expired and taken over, or gone): its handler was aborted. */
  heartbeatLost(queue: string): void;
  /** An artifact write (temp file, fsync, rename) failed; refused oversized writes are not counted. */
  artifactWriteFailed(): void;
  /** A committed stage requested publications of these profiles (refused ones included). */
  publicationsRequested(pipeline: string, profiles: readonly string[]): void;
  /** A handler ignored its abort signal and was abandoned after its timeout. */
  handlerAbandoned(pipeline: string, stage: string): void;
  /** The reaper removed orphaned temp files (left by crashed writers). */
  orphanedTempsCollected(count: number): void;
  /** One single-flight cache lookup and how it was answered. */
  cacheRequest(cache: string, result: CacheRequestResult): void;
  /** A caller became the builder of a cache entry (a build started). */
  cacheBuild(cache: string): void;
  /**
   * Publications refused by compare-and-set in a committed stage (an older or duplicate publish,
   * or one made under a lock fence that is no longer current).
   */
  duplicatePublishPrevented(pipeline: string, count: number): void;
  /** One lookup in a per-process LRU in front of the single-flight cache (`CacheKeyOptions.local`). */
  localCacheRequest(cache: string, result: LocalCacheResult): void;
  /** A stage found its lock held and was handed back to wait (its attempt not counted). */
  lockWaited(pipeline: string, stage: string): void;
  /** A stage took its lock after waiting `waitMs` since it first found it held (0: it was free). */
  lockAcquired(pipeline: string, stage: string, waitMs: number): void;
  /** The reaper removed expired locks (stale: their owner stopped renewing them). */
  staleLocksReaped(count: number): void;
}

/** How a per-process LRU lookup was answered: its own fresh copy, or not (then the shared cache answers). */
export type LocalCacheResult = 'hit' | 'miss';

/**
 * How a cache lookup was answered, as counted in `kiln_cache_requests_total{result}`: a fresh
 * value, a build by this caller, a stale value (served while one caller revalidates), a negative
 * entry (a permanent failure), or the value of another caller's build it waited for.
 */
export const CacheRequestResult = {
  hit: 'hit',
  miss: 'miss',
  stale: 'stale',
  negative: 'negative',
  wait: 'wait',
} as const;
export type CacheRequestResult = (typeof CacheRequestResult)[keyof typeof CacheRequestResult];

/** An observer that ignores everything. */
export const noopObserver: EngineObserver = {
  stageExecuted: () => {},
  idempotentSkip: () => {},
  redelivered: () => {},
  runStatus: () => {},
  runFinished: () => {},
  submitDeduplicated: () => {},
  submitRefused: () => {},
  jobsClaimed: () => {},
  stageTimedOut: () => {},
  heartbeatLost: () => {},
  artifactWriteFailed: () => {},
  publicationsRequested: () => {},
  handlerAbandoned: () => {},
  orphanedTempsCollected: () => {},
  cacheRequest: () => {},
  cacheBuild: () => {},
  duplicatePublishPrevented: () => {},
  localCacheRequest: () => {},
  lockWaited: () => {},
  lockAcquired: () => {},
  staleLocksReaped: () => {},
};
