/**
 * `submitRun` for the memory backend: idempotent submission, stage records, first job, and
 * supersession of older versions of the same subject.
 */
import { ConflictError, ErrorClass, ValidationError } from '../../core/errors.ts';
import type { Run, StageErrorRecord, StageRecord } from '../../core/model.ts';
import { RunStatus, StageStatus } from '../../core/model.ts';
import type { SubmitRunRequest, SubmitRunResult } from '../../core/ports.ts';
import { isTerminal } from '../../core/run/transitions.ts';
import type { MemoryStore } from './store.ts';

/** Submission idempotency keys are scoped to their pipeline. */
function runKeyOf(pipeline: string, idempotencyKey: string): string {
  return `${pipeline}\0${idempotencyKey}`;
}

/** The error recorded on a run that a newer version replaced. */
function supersededError(by: Run): StageErrorRecord {
  return {
    class: ErrorClass.permanent,
    code: 'SUPERSEDED',
    message: `superseded by run ${by.id} (version ${String(by.subjectVersion)})`,
  };
}

/** Runs of the same pipeline and subject as `run`, other than itself. */
function sameSubjectRuns(store: MemoryStore, run: Run): Run[] {
  if (run.subjectId === null || run.subjectVersion === null) return [];
  return [...store.runs.values()].filter(
    (r) => r.id !== run.id && r.pipeline === run.pipeline && r.subjectId === run.subjectId && r.subjectVersion !== null,
  );
}

function newRun(store: MemoryStore, request: SubmitRunRequest, now: number): Run {
  return {
    id: store.ids.next('run'),
    pipeline: request.pipeline,
    pipelineVersion: request.pipelineVersion,
    status: RunStatus.queued,
    currentStage: request.firstJob.stage,
    input: structuredClone(request.input),
    inputChecksum: request.inputChecksum,
    idempotencyKey: request.idempotencyKey ?? null,
    subjectId: request.subjectId ?? null,
    subjectVersion: request.subjectVersion ?? null,
    tenant: request.tenant ?? null,
    traceId: request.traceId ?? null,
    error: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
}

function pendingStages(runId: string, stages: readonly string[]): StageRecord[] {
  return stages.map((stage, index) => ({
    runId,
    stage,
    index,
    status: StageStatus.pending,
    attempts: 0,
    output: null,
    error: null,
    progress: null,
    leaseOwner: null,
    leaseUntil: null,
    rollbackStatus: null,
    startedAt: null,
    finishedAt: null,
    durationMs: null,
  }));
}

/** Creates a run with its stage records and first job, or returns the run for its idempotency key. */
export function submitRun(store: MemoryStore, request: SubmitRunRequest): SubmitRunResult {
  const now = store.clock.now();
  if (!request.stages.includes(request.firstJob.stage)) {
    throw new ValidationError(`first job stage ${request.firstJob.stage} is not a stage of ${request.pipeline}`);
  }
  if (request.idempotencyKey !== undefined) {
    const existing = store.runs.get(store.runKeys.get(runKeyOf(request.pipeline, request.idempotencyKey)) ?? '');
    if (existing) {
      if (existing.inputChecksum !== request.inputChecksum) {
        throw new ConflictError('IDEMPOTENCY_KEY_REUSED', `idempotency key ${request.idempotencyKey} was used with another input`, {
          details: { idempotencyKey: request.idempotencyKey, runId: existing.id },
        });
      }
      return { run: existing, created: false };
    }
  }

  const run = newRun(store, request, now);
  store.runs.set(run.id, run);
  store.stages.set(run.id, pendingStages(run.id, request.stages));
  if (run.idempotencyKey !== null) store.runKeys.set(runKeyOf(run.pipeline, run.idempotencyKey), run.id);

  const others = sameSubjectRuns(store, run);
  const version = run.subjectVersion ?? 0;
  const newer = others.find((r) => (r.subjectVersion ?? 0) > version);
  if (newer) {
    // Born obsolete: recorded (so the submission is visible and idempotent) but never runs.
    store.endRun(run, RunStatus.superseded, supersededError(newer), now);
    return { run, created: true };
  }
  for (const older of others) {
    if ((older.subjectVersion ?? 0) < version && !isTerminal(older.status)) {
      store.endRun(older, RunStatus.superseded, supersededError(run), now);
    }
  }
  store.enqueue(run, request.firstJob, now);
  return { run, created: true };
}
