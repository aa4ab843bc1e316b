/**
 * The checks every store makes on a batch of submissions (`Store.jobs.submit`), and the errors
 * they raise, written once so that every store rejects the same batch with the same error and
 * the same `details` (`index` = the failing request's position in the batch).
 */
import { AdmissionRefusedError, ConflictError, ValidationError } from '../../core/errors.ts';
import type { SubmitAdmission, SubmitRunRequest } from '../../core/ports/jobs.ts';

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

/** What a store reads, as it was before the batch, for the admission checks of a batch. */
export interface AdmissionReads {
  /** Whether a run of `pipeline` holds idempotency key `key`. */
  keyHeld(pipeline: string, key: string): boolean;
  /**
   * Runs of `tenant` (null: runs without one) that are queued or running; a store may stop
   * counting at `atMost` (the limit), so that a count costs no more than the limit.
   */
  inFlight(tenant: string | null, atMost: number): number;
  /** Ready jobs of `queue`, or `atMost` when there are at least that many. */
  backlog(queue: string, atMost: number): number;
}

/** Whether any request of the batch carries admission limits (else no store counts anything). */
export function hasAdmission(requests: readonly SubmitRunRequest[]): boolean {
  return requests.some((request) => request.admission !== undefined);
}

/**
 * The admission checks of a batch (see `SubmitAdmission`), before anything is written: a request
 * that would create a run (its key held neither before the call nor earlier in the batch) is
 * checked against the counts as they were before the call plus one per run created by the
 * requests before it (against its tenant and its first queue). Throws the
 * `AdmissionRefusedError` of the first request a limit refuses. Each count is read once.
 */
export function assertBatchAdmitted(requests: readonly SubmitRunRequest[], reads: AdmissionReads): void {
  const before = { inFlight: new Map<string | null, number>(), backlog: new Map<string, number>() };
  const created = { inFlight: new Map<string | null, number>(), backlog: new Map<string, number>() };
  const batchKeys = new Set<string>();
  requests.forEach((request, index) => {
    const { idempotencyKey, pipeline, admission } = request;
    if (idempotencyKey !== undefined) {
      const runKey = JSON.stringify([pipeline, idempotencyKey]);
      if (batchKeys.has(runKey) || reads.keyHeld(pipeline, idempotencyKey)) return;
      batchKeys.add(runKey);
    }
    const tenant = request.tenant ?? null;
    const queue = request.firstJob.queue;
    if (admission !== undefined) {
      refuseOverLimit(request, index, admission, {
        inFlight: (atMost) => cached(before.inFlight, tenant, () => reads.inFlight(tenant, atMost)) + (created.inFlight.get(tenant) ?? 0),
        backlog: (atMost) => cached(before.backlog, queue, () => reads.backlog(queue, atMost)) + (created.backlog.get(queue) ?? 0),
      });
    }
    created.inFlight.set(tenant, (created.inFlight.get(tenant) ?? 0) + 1);
    created.backlog.set(queue, (created.backlog.get(queue) ?? 0) + 1);
  });
}

function cached<K>(map: Map<K, number>, key: K, read: () => number): number {
  let value = map.get(key);
  if (value === undefined) {
    value = read();
    map.set(key, value);
  }
  return value;
}

/** Throws the refusal of the first limit of `admission` the counts reach (each counted only when its limit is set). */
function refuseOverLimit(
  request: SubmitRunRequest,
  index: number,
  admission: SubmitAdmission,
  counts: { inFlight: (atMost: number) => number; backlog: (atMost: number) => number },
): void {
  const { refuse, maxInFlightRuns, maxBacklog, retryAfterMs } = admission;
  const tenant = request.tenant ?? null;
  const queue = request.firstJob.queue;
  if (refuse !== undefined) {
    throw new AdmissionRefusedError(refuse.code, `tenant ${tenant ?? '(none)'} submits faster than its submit rate allows`, refuse.retryAfterMs, {
      details: { index, tenant },
    });
  }
  if (maxInFlightRuns !== undefined && counts.inFlight(maxInFlightRuns) >= maxInFlightRuns) {
    throw new AdmissionRefusedError('TENANT_IN_FLIGHT_LIMIT', `tenant ${tenant ?? '(none)'} already has ${maxInFlightRuns} runs queued or running (its limit)`, retryAfterMs, {
      details: { index, tenant, limit: maxInFlightRuns },
    });
  }
  if (maxBacklog !== undefined && counts.backlog(maxBacklog) >= maxBacklog) {
    throw new AdmissionRefusedError('QUEUE_BACKLOG_FULL', `queue ${queue} already holds ${maxBacklog} ready jobs (its backlog limit)`, retryAfterMs, {
      details: { index, queue, limit: maxBacklog },
    });
  }
}
