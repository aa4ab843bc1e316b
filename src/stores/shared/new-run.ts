/**
 * The run a submission creates, as every store records it: the request's fields, `queued` at its
 * first stage, created and updated `now`.
 */
import { RunStatus, type JsonValue, type Run } from '../../core/model.ts';
import type { SubmitRunRequest } from '../../core/ports/jobs.ts';

/** A new `queued` run for `request`, at its first stage; `input` is the value the run keeps (a store's own copy). */
export function newRun(id: string, request: SubmitRunRequest, now: number, input: JsonValue): Run {
  return {
    id,
    pipeline: request.pipeline,
    pipelineVersion: request.pipelineVersion,
    status: RunStatus.queued,
    currentStage: request.firstJob.stage,
    input,
    inputChecksum: request.inputChecksum,
    idempotencyKey: request.idempotencyKey ?? null,
    subjectId: request.subjectId ?? null,
    subjectVersion: request.subjectVersion ?? null,
    tenant: request.tenant ?? null,
    traceId: request.traceId ?? null,
    traceParent: request.traceParent ?? null,
    error: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
}
