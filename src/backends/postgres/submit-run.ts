/**
 * `submitRun`. Without a subject it is ONE statement: run, stage records, first job and its
 * wake-up (idempotency keys collapse on the runs_idempotency_key index). With a subject it is a
 * transaction holding an advisory lock on (schema, pipeline, subject), so two versions of one
 * subject submitted at once cannot both stay live: the newer supersedes the older, whichever
 * commits first.
 */
import type pg from 'pg';
import { ConflictError, PipelineError, ValidationError } from '../../core/errors.ts';
import { jobIdempotencyKey } from '../../core/keys.ts';
import { TERMINAL_RUN_STATUSES, type StageErrorRecord } from '../../core/model.ts';
import type { SubmitRunRequest, SubmitRunResult } from '../../core/ports.ts';
import type { PgContext } from './context.ts';
import { inTransaction, queryRows, type Queryable } from './database.ts';
import { errorJsonText, runFromRow, toJsonText, type RunRow } from './rows.ts';
import { endLockedRuns, lockRuns, supersededError } from './run-state.ts';

/** A row of the insert statement: the run, and whether its first job woke a queue. */
type InsertedRow = RunRow & { woken: number };

/** Thrown inside the subject transaction when another submission took the key first: rolls it back. */
class KeyTakenMeanwhile extends Error {}

/**
 * Inserts the run with its stage records and, unless `ended` says it is born superseded, its
 * first job. Returns the row, or undefined when the idempotency key is already taken.
 */
async function insertRun(
  ctx: PgContext,
  db: Queryable,
  request: SubmitRunRequest,
  runId: string,
  ended: StageErrorRecord | null,
): Promise<InsertedRow | undefined> {
  const first = request.firstJob;
  const live = ended === null;
  const rows = await queryRows<InsertedRow>(db, ctx.sql.insertRun, [
    ctx.now(),
    runId,
    request.pipeline,
    request.pipelineVersion,
    live ? 'queued' : 'superseded',
    live ? first.stage : null,
    toJsonText(request.input),
    request.inputChecksum,
    request.idempotencyKey ?? null,
    request.subjectId ?? null,
    request.subjectVersion ?? null,
    request.tenant ?? null,
    request.traceId ?? null,
    live ? null : errorJsonText(ended),
    !live,
    live ? 'pending' : 'skipped',
    request.stages,
    live ? ctx.ids.next('job') : null,
    first.stage,
    first.queue,
    first.kind,
    jobIdempotencyKey(runId, first.stage, first.kind),
    first.maxAttempts,
    first.priority,
    ctx.channel,
  ]);
  return rows[0];
}

/** The run already submitted under the request's key; a conflict when its input differs. */
async function existingForKey(ctx: PgContext, db: Queryable, request: SubmitRunRequest): Promise<RunRow | undefined> {
  if (request.idempotencyKey === undefined) return undefined;
  const [existing] = await queryRows<RunRow>(db, ctx.sql.selectRunByKey, [request.pipeline, request.idempotencyKey]);
  if (existing && existing.input_checksum !== request.inputChecksum) {
    throw new ConflictError('IDEMPOTENCY_KEY_REUSED', `idempotency key ${request.idempotencyKey} was used with another input`, {
      details: { idempotencyKey: request.idempotencyKey, runId: existing.id },
    });
  }
  return existing;
}

/**
 * Inside the subject lock: an existing run for the key wins; a higher version makes the new run
 * born superseded; otherwise lower live versions are superseded and the new run enqueued.
 */
async function submitWithSubject(
  ctx: PgContext,
  client: pg.PoolClient,
  request: SubmitRunRequest & { subjectId: string; subjectVersion: number },
): Promise<{ row: RunRow; created: boolean }> {
  const { pipeline, subjectId, subjectVersion } = request;
  await queryRows(client, ctx.sql.lockSubject, [JSON.stringify([ctx.schema, pipeline, subjectId])]);
  const existing = await existingForKey(ctx, client, request);
  if (existing) return { row: existing, created: false };

  const runId = ctx.ids.next('run');
  const [newer] = await queryRows<RunRow>(client, ctx.sql.selectNewerSubjectRun, [pipeline, subjectId, subjectVersion]);
  // Born obsolete: recorded (so the submission is visible and idempotent) but never runs.
  const ended = newer ? supersededError({ id: newer.id, subjectVersion: newer.subject_version }) : null;
  if (ended === null) {
    const older = await queryRows<{ id: string }>(client, ctx.sql.selectOlderLiveSubjectRuns, [
      pipeline,
      subjectId,
      subjectVersion,
      TERMINAL_RUN_STATUSES,
    ]);
    const locked = await lockRuns(ctx, client, older.map((r) => r.id));
    // Re-checked under the lock: a run that ended meanwhile stays as it ended.
    const live = [...locked.values()].filter((r) => !TERMINAL_RUN_STATUSES.includes(r.status)).map((r) => r.id);
    await endLockedRuns(ctx, client, live, 'superseded', supersededError({ id: runId, subjectVersion }));
  }
  const row = await insertRun(ctx, client, request, runId, ended);
  if (!row) throw new KeyTakenMeanwhile();
  return { row, created: true };
}

/** Creates a run with its stage records and first job, or returns the run for its idempotency key. */
export async function submitRun(ctx: PgContext, request: SubmitRunRequest): Promise<SubmitRunResult> {
  if (!request.stages.includes(request.firstJob.stage)) {
    throw new ValidationError(`first job stage ${request.firstJob.stage} is not a stage of ${request.pipeline}`);
  }
  const { subjectId, subjectVersion } = request;
  try {
    if (subjectId !== undefined && subjectVersion !== undefined) {
      const { row, created } = await inTransaction(ctx.pool, (client) =>
        submitWithSubject(ctx, client, { ...request, subjectId, subjectVersion }),
      );
      if (created && row.status === 'queued') ctx.wake([request.firstJob.queue]);
      return { run: runFromRow(row), created };
    }
    const row = await insertRun(ctx, ctx.pool, request, ctx.ids.next('run'), null);
    if (row) {
      if (row.woken > 0) ctx.wake([request.firstJob.queue]);
      return { run: runFromRow(row), created: true };
    }
  } catch (err) {
    if (!(err instanceof KeyTakenMeanwhile)) throw err;
  }
  // Another submission holds the key (it may have committed while we inserted).
  const existing = await existingForKey(ctx, ctx.pool, request);
  if (!existing) throw new PipelineError('INTERNAL', `run for idempotency key ${String(request.idempotencyKey)} vanished`, false);
  return { run: runFromRow(existing), created: false };
}
