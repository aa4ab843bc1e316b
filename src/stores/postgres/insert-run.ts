/**
 * The two statements every submission path shares: inserting one run with its stage records and
 * first job (and its NOTIFY) as ONE statement, and reading the run that holds a request's
 * idempotency key. They run on the pool (autocommit) or inside the caller's transaction.
 */
import { PipelineError, type ErrorDetails } from '../../core/errors.ts';
import { jobIdempotencyKey } from '../../core/keys.ts';
import type { StageErrorRecord } from '../../core/model.ts';
import type { SubmitRunRequest } from '../../core/ports/jobs.ts';
import { idempotencyKeyReused } from '../shared/submit-checks.ts';
import type { PgContext } from './context.ts';
import { queryRows, type Queryable } from './database.ts';
import { errorJsonText, toJsonText, type RunRow } from './rows.ts';

/** A row of the insert statement: the run, and whether its first job woke a queue. */
export type InsertedRow = RunRow & { woken: number };

/**
 * Inserts the run with its stage records and, unless `ended` says it is born superseded, its
 * first job. Returns the row, or undefined when the idempotency key is already taken (ON
 * CONFLICT waits for an uncommitted holder to end first).
 */
export async function insertRun(
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

/**
 * The run holding the key of the request at `index` (stored before the call, or created by this
 * batch: its id is in `created`); `IDEMPOTENCY_KEY_REUSED` when its input differs. Each call is a
 * new statement, so under READ COMMITTED it sees a holder that committed meanwhile.
 */
export async function existingForKey(
  ctx: PgContext,
  db: Queryable,
  request: SubmitRunRequest,
  index: number,
  created: ReadonlySet<string>,
): Promise<RunRow | undefined> {
  const { idempotencyKey } = request;
  if (idempotencyKey === undefined) return undefined;
  const [existing] = await queryRows<RunRow>(db, ctx.sql.selectRunByKey, [request.pipeline, idempotencyKey]);
  if (existing && existing.input_checksum !== request.inputChecksum) {
    throw idempotencyKeyReused({ index, idempotencyKey, storedRunId: created.has(existing.id) ? undefined : existing.id });
  }
  return existing;
}

/** A key whose insert was refused yet whose holder cannot be read: runs are never deleted, so a bug. */
export function keyHolderVanished(request: SubmitRunRequest, details: ErrorDetails): PipelineError {
  return new PipelineError('INTERNAL', `run for idempotency key ${String(request.idempotencyKey)} vanished`, false, { details });
}
