/**
 * Retry decisions: from an error's class, the attempt number and the stage policy to a
 * {@link FailureDecision}. Pure; randomness is injected so tests are deterministic.
 */
import { ErrorClass, PipelineError, StageFailure } from '../errors.ts';
import type { StageErrorRecord } from '../model.ts';
import type { FailureDecision, JobSpec } from '../ports/jobs.ts';
import type { BackoffPolicy, StagePolicy } from './stage-policy.ts';

/** Full-jitter exponential backoff: uniform in `[0, min(cap, base * 2^(attempt-1))]`. */
export function backoffDelayMs(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exp = policy.baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30));
  return Math.floor(random() * Math.min(policy.capMs, exp));
}

/** Lock waits start at this bound: a held lock is retried after 50–100 ms at first. */
export const LOCK_WAIT_BASE_MS = 100;
/** Lock waits never exceed this bound (the holder may release any moment). */
export const LOCK_WAIT_CAP_MS = 5_000;

/**
 * How long a job whose stage lock is held waits before it is claimable again: the bound grows with
 * how long it has waited already (`waitedMs`, so the total wait roughly doubles per wait), from
 * {@link LOCK_WAIT_BASE_MS} to {@link LOCK_WAIT_CAP_MS}; the delay is uniform in its upper half
 * (jitter without busy retries), and never later than the holder's lock would expire
 * (`holderRemainingMs`, at least the base): a crashed holder's lock is taken soon after it lapses.
 */
export function lockWaitDelayMs(waitedMs: number, holderRemainingMs: number, random: () => number = Math.random): number {
  const bound = Math.min(LOCK_WAIT_CAP_MS, Math.max(LOCK_WAIT_BASE_MS, waitedMs));
  const jittered = bound / 2 + (random() * bound) / 2;
  return Math.round(Math.min(jittered, Math.max(LOCK_WAIT_BASE_MS, holderRemainingMs)));
}

/** Turns anything a handler threw into a recorded error with its class. */
export function classifyError(err: unknown): StageErrorRecord & { retryAfterMs?: number } {
  if (err instanceof StageFailure) {
    return {
      class: err.errorClass,
      code: err.code,
      message: err.message,
      ...(err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs }),
    };
  }
  if (err instanceof PipelineError) {
    return { class: err.retryable ? ErrorClass.transient : ErrorClass.permanent, code: err.code, message: err.message };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { class: ErrorClass.transient, code: 'STAGE_FAILED', message };
}

/** Inputs to {@link decideFailure}. */
export interface FailureContext {
  error: StageErrorRecord & { retryAfterMs?: number };
  /** The attempt that just failed (1-based). */
  attempt: number;
  policy: StagePolicy;
  /** Compensation to enqueue if this ends the run (`dead_letter` or `fail`). */
  rollback: JobSpec | null;
  random?: () => number;
}

/**
 * transient: retry with backoff until `maxAttempts`, then dead-letter (a replay may succeed);
 * intervention: retry until `min(maxAttempts, interventionAttempts)`, then park; permanent: fail
 * the run at once (no attempt or replay can succeed; like Temporal's non-retryable failure).
 */
export function decideFailure(ctx: FailureContext): FailureDecision {
  const { error, attempt, policy } = ctx;
  if (error.class === ErrorClass.permanent) return { action: 'fail', rollback: ctx.rollback };
  if (error.class === ErrorClass.intervention) {
    if (attempt >= Math.min(policy.maxAttempts, policy.interventionAttempts)) return { action: 'park' };
  } else if (attempt >= policy.maxAttempts) {
    return { action: 'dead_letter', rollback: ctx.rollback };
  }
  const delayMs = error.retryAfterMs ?? backoffDelayMs(policy.backoff, attempt, ctx.random);
  return { action: 'retry', delayMs };
}

/**
 * A failed compensation (rollback job): retried with backoff while attempts remain (transient
 * errors up to `maxAttempts`, intervention errors up to `min(maxAttempts, interventionAttempts)`),
 * then — and at once for a permanent error — the run is parked for an operator. A compensation
 * is never dead-lettered or failed: an undone side effect must stay visible and resumable, and
 * compensations are not themselves compensated.
 */
export function decideRollbackFailure(ctx: Omit<FailureContext, 'rollback'>): FailureDecision {
  const { error, attempt, policy } = ctx;
  const limit = error.class === ErrorClass.intervention ? Math.min(policy.maxAttempts, policy.interventionAttempts) : policy.maxAttempts;
  if (error.class === ErrorClass.permanent || attempt >= limit) return { action: 'park' };
  return { action: 'retry', delayMs: error.retryAfterMs ?? backoffDelayMs(policy.backoff, attempt, ctx.random) };
}
