/**
 * Why a running handler's signal fired. `signal.reason` is one of these, so handlers (and the
 * executor) can tell a timeout from a lost lease, a cancelled run or a shutdown.
 */
import { PipelineError } from '../core/errors.ts';

/** The causes of an abort. */
export const AbortCause = {
  timeout: 'timeout',
  lease_lost: 'lease_lost',
  /** The stage's lock was lost (expired or taken over): the attempt fails, transient. */
  lock_lost: 'lock_lost',
  cancelled: 'cancelled',
  shutdown: 'shutdown',
} as const;
export type AbortCause = (typeof AbortCause)[keyof typeof AbortCause];

const CODES: Record<AbortCause, string> = {
  timeout: 'STAGE_TIMEOUT',
  lease_lost: 'LEASE_LOST',
  lock_lost: 'LOCK_LOST',
  cancelled: 'CANCELLED',
  shutdown: 'WORKER_SHUTDOWN',
};

/** The reason passed to `AbortController.abort()` by the worker. */
export class StageAbortError extends PipelineError {
  readonly abortCause: AbortCause;
  constructor(abortCause: AbortCause, message: string) {
    super(CODES[abortCause], message, abortCause === 'timeout' || abortCause === 'shutdown' || abortCause === 'lock_lost');
    this.abortCause = abortCause;
  }
}
