/**
 * `submitRuns`, by the cheapest path that keeps the batch all or nothing:
 * - one request without a subject: ONE statement (run, stage records, first job and NOTIFY;
 *   autocommit), and a second read only when its idempotency key is already taken;
 * - several requests, none with a subject: ONE call of `submit_runs` (migration 0005), which
 *   creates them set-wise and raises (rolling the statement back) on a reused key;
 * - any request with a subject: request by request in one transaction (`submit-in-order.ts`).
 */
import { PipelineError } from '../../core/errors.ts';
import { jobIdempotencyKey } from '../../core/keys.ts';
import type { SubmitRunRequest, SubmitRunResult } from '../../core/ports/jobs.ts';
import { assertSubmittable, idempotencyKeyReused } from '../shared/submit-checks.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';
import { existingForKey, insertRun, keyHolderVanished } from './insert-run.ts';
import { runFromRow, toJsonText, type RunRow } from './rows.ts';
import { submitInOrder } from './submit-in-order.ts';

/** The SQLSTATE `submit_runs` raises for a reused idempotency key (see migration 0005). */
const KEY_REUSED_SQLSTATE = 'KL409';

/** A row of `submit_runs`. */
interface SubmittedRow {
  ord: number;
  created: boolean;
  run: RunRow;
}

/** A request with any subject field goes through the per-request path, which stores them. */
function hasSubject(request: SubmitRunRequest): boolean {
  return request.subjectId !== undefined || request.subjectVersion !== undefined;
}

/** One request as a `submit_request` JSON object (migration 0005), with fresh run and job ids. */
function requestJson(ctx: PgContext, request: SubmitRunRequest): Record<string, unknown> {
  const runId = ctx.ids.next('run');
  const first = request.firstJob;
  return {
    run_id: runId,
    job_id: ctx.ids.next('job'),
    pipeline: request.pipeline,
    pipeline_version: request.pipelineVersion,
    input: toJsonText(request.input),
    input_checksum: request.inputChecksum,
    idempotency_key: request.idempotencyKey ?? null,
    tenant: request.tenant ?? null,
    trace_id: request.traceId ?? null,
    stages: request.stages,
    first_stage: first.stage,
    first_queue: first.queue,
    first_kind: first.kind,
    first_key: jobIdempotencyKey(runId, first.stage, first.kind),
    max_attempts: first.maxAttempts,
    priority: first.priority,
  };
}

/** The kiln error for `submit_runs`' KL409, whose DETAIL is `{index, idempotencyKey, runId?}`. */
function keyReusedError(err: unknown): PipelineError | undefined {
  const { code, detail } = (err ?? {}) as { code?: unknown; detail?: unknown };
  if (code !== KEY_REUSED_SQLSTATE || typeof detail !== 'string') return undefined;
  const parsed = JSON.parse(detail) as { index: number; idempotencyKey: string; runId?: string };
  return idempotencyKeyReused({ index: parsed.index, idempotencyKey: parsed.idempotencyKey, storedRunId: parsed.runId });
}

/** Several requests without a subject: one `submit_runs` call. */
async function submitSetWise(ctx: PgContext, requests: readonly SubmitRunRequest[]): Promise<SubmitRunResult[]> {
  const payload = JSON.stringify(requests.map((request) => requestJson(ctx, request)));
  let rows: SubmittedRow[];
  try {
    rows = await queryRows<SubmittedRow>(ctx.pool, ctx.sql.submitRuns, [ctx.now(), payload, ctx.channel]);
  } catch (err) {
    throw keyReusedError(err) ?? err;
  }
  if (rows.length !== requests.length) {
    throw new PipelineError('INTERNAL', `submit_runs returned ${rows.length} rows for ${requests.length} requests`, false);
  }
  const woken = new Set<string>();
  const results = rows.map((row, index): SubmitRunResult => {
    // Every run the call created is queued with a ready first job.
    if (row.created) woken.add((requests[index] as SubmitRunRequest).firstJob.queue);
    return { run: runFromRow(row.run), created: row.created };
  });
  ctx.wake(woken);
  return results;
}

/** One request without a subject: the insert statement alone, unless its key is taken. */
async function submitAlone(ctx: PgContext, request: SubmitRunRequest): Promise<SubmitRunResult> {
  const row = await insertRun(ctx, ctx.pool, request, ctx.ids.next('run'), null);
  if (row) {
    if (row.woken > 0) ctx.wake([request.firstJob.queue]);
    return { run: runFromRow(row), created: true };
  }
  // Another submission holds the key (it may have committed while we inserted).
  const existing = await existingForKey(ctx, ctx.pool, request, 0, new Set());
  if (!existing) throw keyHolderVanished(request, { index: 0 });
  return { run: runFromRow(existing), created: false };
}

/** Submits the requests in order, all or nothing (see `Store.submitRuns`); results in input order. */
export async function submitRuns(ctx: PgContext, requests: readonly SubmitRunRequest[]): Promise<SubmitRunResult[]> {
  if (requests.length === 0) return [];
  assertSubmittable(requests);
  if (requests.some(hasSubject)) return submitInOrder(ctx, requests);
  const [only] = requests;
  if (requests.length === 1 && only !== undefined) return [await submitAlone(ctx, only)];
  return submitSetWise(ctx, requests);
}
