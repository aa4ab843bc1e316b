/**
 * `submitRuns` for the memory store: idempotent submission, stage records, first job, and
 * supersession of older versions of the same subject, request by request. Every check that can
 * fail runs before the first write, so a rejected batch leaves the state untouched.
 */
import { ErrorClass } from '../../../core/errors.ts';
import type { Run, StageErrorRecord } from '../../../core/model.ts';
import { RunStatus } from '../../../core/model.ts';
import { IN_FLIGHT_RUN_STATUSES, type SubmitRunRequest, type SubmitRunResult } from '../../../core/ports/jobs.ts';
import { isTerminal } from '../../../core/run/transitions.ts';
import { assertBatchAdmitted, assertSubmittable, hasAdmission, idempotencyKeyReused, type AdmissionReads } from '../../shared/submit-checks.ts';
import { newRun } from '../../shared/new-run.ts';
import { copy, pairKey, pendingStages } from '../rows.ts';
import type { MemoryState } from '../state.ts';

/** Submission idempotency keys are scoped to their pipeline. */
function runKeyOf(pipeline: string, idempotencyKey: string): string {
  return pairKey(pipeline, idempotencyKey);
}

/** The error recorded on a run that a newer version replaced. */
function supersededError(by: Run): StageErrorRecord {
  return {
    class: ErrorClass.permanent,
    code: 'SUPERSEDED',
    message: `superseded by run ${by.id} (version ${String(by.subjectVersion)})`,
  };
}

/** Runs of the same pipeline and versioned subject as `run`, other than itself. */
function sameSubjectRuns(state: MemoryState, run: Run): Run[] {
  return state.subjectRunsOf(run).filter((r) => r !== run);
}

/**
 * Replays the batch's idempotency keys without writing: a key keeps the checksum of the run that
 * holds it (stored, or the first request of the batch that uses it). Throws the conflict of the
 * first request that reuses a key with another checksum.
 */
function assertKeysConsistent(state: MemoryState, requests: readonly SubmitRunRequest[]): void {
  const batchChecksums = new Map<string, string>();
  requests.forEach((request, index) => {
    const { idempotencyKey } = request;
    if (idempotencyKey === undefined) return;
    const runKey = runKeyOf(request.pipeline, idempotencyKey);
    const stored = state.runs.get(state.runKeys.get(runKey) ?? '');
    const checksum = stored?.inputChecksum ?? batchChecksums.get(runKey);
    if (checksum === undefined) batchChecksums.set(runKey, request.inputChecksum);
    else if (checksum !== request.inputChecksum) throw idempotencyKeyReused({ index, idempotencyKey, storedRunId: stored?.id });
  });
}

/**
 * Applies one request that is known to succeed. The result holds a copy of the run as this
 * request left it: a later request of the batch may supersede it.
 */
function submitChecked(state: MemoryState, request: SubmitRunRequest, now: number): SubmitRunResult {
  if (request.idempotencyKey !== undefined) {
    const existing = state.runs.get(state.runKeys.get(runKeyOf(request.pipeline, request.idempotencyKey)) ?? '');
    if (existing) return { run: copy(existing), created: false };
  }

  const run = newRun(state.ids.next('run'), request, now, copy(request.input));
  state.addRun(run);
  state.stages.set(run.id, pendingStages(run.id, request.stages));
  if (run.idempotencyKey !== null) state.runKeys.set(runKeyOf(run.pipeline, run.idempotencyKey), run.id);

  const others = sameSubjectRuns(state, run);
  const version = run.subjectVersion ?? 0;
  const newer = others.find((r) => (r.subjectVersion ?? 0) > version);
  if (newer) {
    // Born obsolete: recorded (so the submission is visible and idempotent) but never runs.
    state.endRun(run, RunStatus.superseded, supersededError(newer), now);
    return { run: copy(run), created: true };
  }
  for (const older of others) {
    if ((older.subjectVersion ?? 0) < version && !isTerminal(older.status)) {
      state.endRun(older, RunStatus.superseded, supersededError(run), now);
    }
  }
  state.enqueue(run, request.firstJob, now);
  return { run: copy(run), created: true };
}

/** The admission counts of the memory store: the backlog from the job index, the rest by scans. */
function admissionReads(state: MemoryState): AdmissionReads {
  const inFlight: readonly string[] = IN_FLIGHT_RUN_STATUSES;
  return {
    keyHeld: (pipeline, key) => state.runKeys.has(runKeyOf(pipeline, key)),
    inFlight: (tenant) => [...state.runs.values()].filter((r) => r.tenant === tenant && inFlight.includes(r.status)).length,
    backlog: (queue) => state.jobIndex.queue(queue)?.readyCount ?? 0,
  };
}

/** Submits the requests in order, all or nothing (see `JobsPort.submit`); results in input order. */
export function submitRuns(state: MemoryState, requests: readonly SubmitRunRequest[]): SubmitRunResult[] {
  assertSubmittable(requests);
  assertKeysConsistent(state, requests);
  if (hasAdmission(requests)) assertBatchAdmitted(requests, admissionReads(state));
  const now = state.clock.now();
  return requests.map((request) => submitChecked(state, request, now));
}
