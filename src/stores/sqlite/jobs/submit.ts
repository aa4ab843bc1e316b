/**
 * `submitRuns`: idempotent submission, stage records, first job, and supersession of older
 * versions of the same subject, request by request in ONE BEGIN IMMEDIATE transaction (opened by
 * the caller), so two processes submitting the same idempotency key or two versions of one
 * subject at once cannot both win, and a failing request rolls the whole batch back. Each
 * request reads what the requests before it wrote, through the same prepared statements.
 */
import { ErrorClass } from '../../../core/errors.ts';
import type { StageErrorRecord } from '../../../core/model.ts';
import type { SubmitRunRequest, SubmitRunResult } from '../../../core/ports/jobs.ts';
import { assertBatchAdmitted, assertSubmittable, hasAdmission, idempotencyKeyReused, type AdmissionReads } from '../../shared/submit-checks.ts';
import type { SqliteContext } from '../context.ts';
import { runFromRow, toJson, type RunRow } from '../rows.ts';
import { endRun, enqueueJob } from '../run-state.ts';

/** The error recorded on a run that a newer version replaced. */
function supersededError(by: RunRow): StageErrorRecord {
  return {
    class: ErrorClass.permanent,
    code: 'SUPERSEDED',
    message: `superseded by run ${by.id} (version ${String(by.subject_version)})`,
  };
}

function newRunRow(ctx: SqliteContext, request: SubmitRunRequest, now: number): RunRow {
  return {
    id: ctx.ids.next('run'),
    pipeline: request.pipeline,
    pipeline_version: request.pipelineVersion,
    status: 'queued',
    current_stage: request.firstJob.stage,
    input: toJson(request.input),
    input_checksum: request.inputChecksum,
    idempotency_key: request.idempotencyKey ?? null,
    subject_id: request.subjectId ?? null,
    subject_version: request.subjectVersion ?? null,
    tenant: request.tenant ?? null,
    trace_id: request.traceId ?? null,
    trace_parent: request.traceParent ?? null,
    error: null,
    created_at: now,
    updated_at: now,
    finished_at: null,
  };
}

/**
 * The run already holding the request's key (stored, or created earlier in this batch: its id is
 * in `created`), or a conflict when its input differs.
 */
function existingForKey(ctx: SqliteContext, request: SubmitRunRequest, index: number, created: ReadonlySet<string>): RunRow | undefined {
  const { idempotencyKey } = request;
  if (idempotencyKey === undefined) return undefined;
  const existing = ctx.sql().selectRunByIdempotencyKey.get(request.pipeline, idempotencyKey);
  if (existing && existing.input_checksum !== request.inputChecksum) {
    throw idempotencyKeyReused({ index, idempotencyKey, storedRunId: created.has(existing.id) ? undefined : existing.id });
  }
  return existing;
}

/**
 * Applies subject versioning to a freshly inserted run: it is born superseded when a higher
 * version exists; otherwise it supersedes lower versions that have not ended. Returns the run.
 */
function applySupersession(ctx: SqliteContext, run: RunRow, request: SubmitRunRequest, now: number): RunRow {
  if (run.subject_id === null || run.subject_version === null) {
    enqueueJob(ctx, run, request.firstJob, now);
    return run;
  }
  const sql = ctx.sql();
  const newer = sql.selectNewerSubjectRun.get(run.pipeline, run.subject_id, run.subject_version);
  if (newer) {
    // Born obsolete: recorded (so the submission is visible and idempotent) but never runs.
    return endRun(ctx, run, 'superseded', supersededError(newer), now);
  }
  for (const older of sql.selectOlderLiveSubjectRuns.all(run.pipeline, run.subject_id, run.subject_version)) {
    endRun(ctx, older, 'superseded', supersededError(run), now);
  }
  enqueueJob(ctx, run, request.firstJob, now);
  return run;
}

/** Applies one request of the batch at `index`; `created` collects the ids of the runs it creates. */
function submitOne(ctx: SqliteContext, request: SubmitRunRequest, index: number, created: Set<string>, now: number): SubmitRunResult {
  const existing = existingForKey(ctx, request, index, created);
  if (existing) return { run: runFromRow(existing), created: false };

  const sql = ctx.sql();
  const row = newRunRow(ctx, request, now);
  sql.insertRun.run(row);
  sql.insertStages(request.stages.length).run(...request.stages.flatMap((stage, i) => [row.id, stage, i]));
  created.add(row.id);
  return { run: runFromRow(applySupersession(ctx, row, request, now)), created: true };
}

/** The admission counts, read inside the submit's write transaction (so no submit overtakes them). */
function admissionReads(ctx: SqliteContext): AdmissionReads {
  const sql = ctx.sql();
  return {
    keyHeld: (pipeline, key) => sql.selectRunByIdempotencyKey.get(pipeline, key) !== undefined,
    inFlight: (tenant, atMost) => sql.countTenantInFlight.get(tenant, atMost)?.n ?? 0,
    backlog: (queue, atMost) => sql.countQueueBacklog.get(queue, atMost)?.n ?? 0,
  };
}

/**
 * Submits the requests in order (see `JobsPort.submit`); runs inside the caller's
 * transaction, which a throw rolls back whole. Results in input order.
 */
export function submitRuns(ctx: SqliteContext, requests: readonly SubmitRunRequest[]): SubmitRunResult[] {
  assertSubmittable(requests);
  if (hasAdmission(requests)) assertBatchAdmitted(requests, admissionReads(ctx));
  const now = ctx.clock.now();
  const created = new Set<string>();
  return requests.map((request, index) => submitOne(ctx, request, index, created, now));
}
