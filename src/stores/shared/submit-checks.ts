/**
 * The checks every store makes on a batch of submissions (`Store.jobs.submit`), and the errors
 * they raise, written once so that every store rejects the same batch with the same error and
 * the same `details` (`index` = the failing request's position in the batch).
 */
import { ConflictError, ValidationError } from '../../core/errors.ts';
import type { SubmitRunRequest } from '../../core/ports/jobs.ts';

/**
 * Checks each request on its own, before anything is stored: `firstJob.stage` must be one of
 * `stages`. Throws the `ValidationError` of the first invalid request.
 */
export function assertSubmittable(requests: readonly SubmitRunRequest[]): void {
  requests.forEach((request, index) => {
    if (request.stages.includes(request.firstJob.stage)) return;
    throw new ValidationError(`first job stage ${request.firstJob.stage} is not a stage of ${request.pipeline}`, {
      details: { index, pipeline: request.pipeline, stage: request.firstJob.stage },
    });
  });
}

/** Where the run holding a reused idempotency key came from. */
export interface KeyHolder {
  /** Position of the request that reused the key. */
  index: number;
  idempotencyKey: string;
  /** The holding run's id when it was stored before the call; undefined when the batch created it. */
  storedRunId: string | undefined;
}

/** The error of a request whose idempotency key is held by a run with another input checksum. */
export function idempotencyKeyReused(holder: KeyHolder): ConflictError {
  const { index, idempotencyKey, storedRunId } = holder;
  return new ConflictError('IDEMPOTENCY_KEY_REUSED', `idempotency key ${idempotencyKey} was used with another input`, {
    details: { index, idempotencyKey, ...(storedRunId === undefined ? {} : { runId: storedRunId }) },
  });
}
