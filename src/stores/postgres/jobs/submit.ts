/**
 * `jobs.submit`, by the cheapest path that keeps the batch all or nothing:
 * - one request without a subject: ONE statement (run, stage records, first job and NOTIFY;
 *   autocommit), and a second read only when its idempotency key is already taken;
 * - several requests, none with a subject: ONE call of `submit_runs` (routines/jobs-submit.sql),
 *   which creates them set-wise and raises (rolling the statement back) on a reused key;
 * - any request with a subject or admission limits: request by request in ONE transaction that first takes the
 *   advisory lock of every subject of the batch, in one order, so two versions of one subject
 *   submitted at once cannot both stay live (the newer supersedes the older, whichever commits
 *   first) and two batches naming the same subjects never wait in a cycle.
 */
import type pg from 'pg';
import { PipelineError, type ErrorDetails } from '../../../core/errors.ts';
import { jobIdempotencyKey } from '../../../core/keys.ts';
import { TERMINAL_RUN_STATUSES, type StageErrorRecord } from '../../../core/model.ts';
import type { SubmitRunRequest, SubmitRunResult } from '../../../core/ports/jobs.ts';
import { assertBatchAdmitted, assertSubmittable, hasAdmission, idempotencyKeyReused } from '../../shared/submit-checks.ts';
import type { PgContext } from '../context.ts';
import { inTransaction, queryRows, type Queryable } from '../database.ts';
import { errorJsonText, runFromRow, toJsonText, type RunRow } from '../rows.ts';
import { endLockedRuns, lockRuns, supersededError } from './end-runs.ts';

/** A row of the insert statement: the run, and whether its first job woke a queue. */
type InsertedRow = RunRow & { woken: number };

/**
 * Inserts the run with its stage records and, unless `ended` says it is born superseded, its
 * first job. Returns the row, or undefined when the idempotency key is already taken (ON
 * CONFLICT waits for an uncommitted holder to end first).
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
  const rows = await queryRows<InsertedRow>(db, ctx.sql.jobs.insertRun, [
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
    request.traceParent ?? null,
  ]);
  return rows[0];
}

/**
 * The run holding the key of the request at `index` (stored before the call, or created by this
 * batch: its id is in `created`); `IDEMPOTENCY_KEY_REUSED` when its input differs. Each call is a
 * new statement, so under READ COMMITTED it sees a holder that committed meanwhile.
 */
async function existingForKey(
  ctx: PgContext,
  db: Queryable,
  request: SubmitRunRequest,
  index: number,
  created: ReadonlySet<string>,
): Promise<RunRow | undefined> {
  const { idempotencyKey } = request;
  if (idempotencyKey === undefined) return undefined;
  const [existing] = await queryRows<RunRow>(db, ctx.sql.jobs.selectRunByKey, [request.pipeline, idempotencyKey]);
  if (existing && existing.input_checksum !== request.inputChecksum) {
    throw idempotencyKeyReused({ index, idempotencyKey, storedRunId: created.has(existing.id) ? undefined : existing.id });
  }
  return existing;
}

/**
 * A key whose insert was refused twice yet whose holder cannot be read (retention may delete one
 * holder between the statements, not two in a row): a bug.
 */
function keyHolderVanished(request: SubmitRunRequest, details: ErrorDetails): PipelineError {
  return new PipelineError('INTERNAL', `run for idempotency key ${String(request.idempotencyKey)} vanished`, false, { details });
}

/**
 * Times the batch is retried when a key it checked as free was taken by a concurrent submission
 * before its insert (each retry sees that key taken, so more than one is a rarity).
 */
const MAX_TRIES = 3;

/** Thrown inside the transaction when another submission took a key first: rolls the batch back. */
class KeyTakenMeanwhile extends Error {}

/** One request's outcome inside the transaction. */
interface Applied {
  row: RunRow;
  created: boolean;
}

type SubjectRequest = SubmitRunRequest & { subjectId: string; subjectVersion: number };

function isSubjectRequest(request: SubmitRunRequest): request is SubjectRequest {
  return request.subjectId !== undefined && request.subjectVersion !== undefined;
}

/**
 * Takes the advisory lock of each distinct subject of the batch and, for requests with admission
 * limits, of each tenant and first queue they count, in sorted order.
 */
async function lockSubjects(ctx: PgContext, client: pg.PoolClient, requests: readonly SubmitRunRequest[]): Promise<void> {
  const keys = new Set(requests.filter(isSubjectRequest).map((r) => JSON.stringify([ctx.schema, r.pipeline, r.subjectId])));
  for (const { admission, tenant, firstJob } of requests) {
    if (admission?.maxInFlightRuns !== undefined) keys.add(JSON.stringify([ctx.schema, 'admission:tenant', tenant ?? null]));
    if (admission?.maxBacklog !== undefined) keys.add(JSON.stringify([ctx.schema, 'admission:queue', firstJob.queue]));
  }
  if (keys.size > 0) await queryRows(client, ctx.sql.jobs.lockSubjects, [[...keys]]);
}

/** The largest limit of each tenant and queue the batch's admission counts, and the keys it names. */
function admissionNeeds(requests: readonly SubmitRunRequest[]): { tenants: Map<string | null, number>; queues: Map<string, number>; keys: SubmitRunRequest[] } {
  const tenants = new Map<string | null, number>();
  const queues = new Map<string, number>();
  for (const { admission, tenant = null, firstJob } of requests) {
    if (admission?.maxInFlightRuns !== undefined) tenants.set(tenant, Math.max(tenants.get(tenant) ?? 0, admission.maxInFlightRuns));
    if (admission?.maxBacklog !== undefined) queues.set(firstJob.queue, Math.max(queues.get(firstJob.queue) ?? 0, admission.maxBacklog));
  }
  return { tenants, queues, keys: requests.filter((r) => r.idempotencyKey !== undefined) };
}

/**
 * The batch's admission checks (see `assertBatchAdmitted`), under the locks of lockSubjects and
 * before the first write: each count is read once, capped at the largest limit it is held to.
 */
async function checkAdmission(ctx: PgContext, client: pg.PoolClient, requests: readonly SubmitRunRequest[]): Promise<void> {
  const needs = admissionNeeds(requests);
  const held = new Set<string>();
  for (const { pipeline, idempotencyKey } of needs.keys) {
    const [run] = await queryRows<RunRow>(client, ctx.sql.jobs.selectRunByKey, [pipeline, idempotencyKey]);
    if (run) held.add(JSON.stringify([pipeline, idempotencyKey]));
  }
  const inFlight = new Map<string | null, number>();
  for (const [tenant, cap] of needs.tenants) {
    const [row] =
      tenant === null
        ? await queryRows<{ n: number }>(client, ctx.sql.jobs.countUntenantedInFlight, [cap])
        : await queryRows<{ n: number }>(client, ctx.sql.jobs.countTenantInFlight, [tenant, cap]);
    inFlight.set(tenant, row?.n ?? 0);
  }
  const backlog = new Map<string, number>();
  for (const [queue, cap] of needs.queues) {
    const [row] = await queryRows<{ n: number }>(client, ctx.sql.jobs.countQueueBacklog, [queue, cap]);
    backlog.set(queue, row?.n ?? 0);
  }
  assertBatchAdmitted(requests, {
    keyHeld: (pipeline, key) => held.has(JSON.stringify([pipeline, key])),
    inFlight: (tenant) => inFlight.get(tenant) ?? 0,
    backlog: (queue) => backlog.get(queue) ?? 0,
  });
}

/**
 * Under the subject lock: an existing run for the key wins; a higher version makes the new run
 * born superseded; otherwise lower live versions are superseded and the new run enqueued.
 */
async function submitWithSubject(
  ctx: PgContext,
  client: pg.PoolClient,
  request: SubjectRequest,
  index: number,
  created: ReadonlySet<string>,
): Promise<Applied> {
  const { pipeline, subjectId, subjectVersion } = request;
  const existing = await existingForKey(ctx, client, request, index, created);
  if (existing) return { row: existing, created: false };

  const runId = ctx.ids.next('run');
  const [newer] = await queryRows<RunRow>(client, ctx.sql.jobs.selectNewerSubjectRun, [pipeline, subjectId, subjectVersion]);
  // Born obsolete: recorded (so the submission is visible and idempotent) but never runs.
  const ended: StageErrorRecord | null = newer ? supersededError({ id: newer.id, subjectVersion: newer.subject_version }) : null;
  const older =
    ended === null
      ? await queryRows<{ id: string }>(client, ctx.sql.jobs.selectOlderLiveSubjectRuns, [pipeline, subjectId, subjectVersion, TERMINAL_RUN_STATUSES])
      : [];
  // Usually a subject's first version: nothing to lock or end, two round trips saved.
  if (older.length > 0) {
    const locked = await lockRuns(ctx, client, older.map((r) => r.id));
    // Re-checked under the lock: a run that ended meanwhile stays as it ended.
    const live = [...locked.values()].filter((r) => !TERMINAL_RUN_STATUSES.includes(r.status)).map((r) => r.id);
    await endLockedRuns(ctx, client, live, 'superseded', supersededError({ id: runId, subjectVersion }));
  }
  const row = await insertRun(ctx, client, request, runId, ended);
  // Older runs may already be superseded for this run: only a rollback undoes that.
  if (!row) throw new KeyTakenMeanwhile();
  return { row, created: true };
}

/** A request without a subject: insert first (one statement), read the key's holder on a refusal. */
async function submitPlain(
  ctx: PgContext,
  client: pg.PoolClient,
  request: SubmitRunRequest,
  index: number,
  created: ReadonlySet<string>,
): Promise<Applied> {
  const row = await insertRun(ctx, client, request, ctx.ids.next('run'), null);
  if (row) return { row, created: true };
  const existing = await existingForKey(ctx, client, request, index, created);
  if (existing) return { row: existing, created: false };
  // Retention deleted the holder between the two statements: its key is free now.
  const again = await insertRun(ctx, client, request, ctx.ids.next('run'), null);
  if (!again) throw keyHolderVanished(request, { index });
  return { row: again, created: true };
}

/** Applies the requests in order on `client`; returns the results and the queues that got a job. */
async function applyInOrder(
  ctx: PgContext,
  client: pg.PoolClient,
  requests: readonly SubmitRunRequest[],
): Promise<{ results: SubmitRunResult[]; woken: Set<string> }> {
  await lockSubjects(ctx, client, requests);
  if (hasAdmission(requests)) await checkAdmission(ctx, client, requests);
  const created = new Set<string>();
  const woken = new Set<string>();
  const results: SubmitRunResult[] = [];
  for (const [index, request] of requests.entries()) {
    const applied = isSubjectRequest(request)
      ? await submitWithSubject(ctx, client, request, index, created)
      : await submitPlain(ctx, client, request, index, created);
    if (applied.created) {
      created.add(applied.row.id);
      if (applied.row.status === 'queued') woken.add(request.firstJob.queue);
    }
    results.push({ run: runFromRow(applied.row), created: applied.created });
  }
  return { results, woken };
}

/**
 * Submits the (already validated) requests in order in one transaction; a failing request rolls
 * the whole batch back. Local wakes are delivered after the commit.
 */
async function submitInOrder(ctx: PgContext, requests: readonly SubmitRunRequest[]): Promise<SubmitRunResult[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { results, woken } = await inTransaction(ctx.pool, (client) => applyInOrder(ctx, client, requests));
      ctx.wake(woken);
      return results;
    } catch (err) {
      if (!(err instanceof KeyTakenMeanwhile)) throw err;
      if (attempt >= MAX_TRIES) {
        throw new PipelineError('INTERNAL', `submission keys kept being taken concurrently (${MAX_TRIES} tries)`, false, { cause: err });
      }
    }
  }
}

/** The SQLSTATE `submit_runs` raises for a reused idempotency key (routines/jobs-submit.sql). */
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

/** One request as a `submit_request` JSON object, with fresh run and job ids. */
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
    trace_parent: request.traceParent ?? null,
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
    rows = await queryRows<SubmittedRow>(ctx.pool, ctx.sql.jobs.submitRuns, [ctx.now(), payload, ctx.channel]);
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
  if (existing) return { run: runFromRow(existing), created: false };
  // Retention deleted the holder between the two statements: its key is free now.
  const again = await insertRun(ctx, ctx.pool, request, ctx.ids.next('run'), null);
  if (!again) throw keyHolderVanished(request, { index: 0 });
  if (again.woken > 0) ctx.wake([request.firstJob.queue]);
  return { run: runFromRow(again), created: true };
}

/** Submits the requests in order, all or nothing (see `JobsPort.submit`); results in input order. */
export async function submitRuns(ctx: PgContext, requests: readonly SubmitRunRequest[]): Promise<SubmitRunResult[]> {
  if (requests.length === 0) return [];
  assertSubmittable(requests);
  // Admission limits are counted under locks, in the transaction of the per-request path.
  if (requests.some(hasSubject) || hasAdmission(requests)) return submitInOrder(ctx, requests);
  const [only] = requests;
  if (requests.length === 1 && only !== undefined) return [await submitAlone(ctx, only)];
  return submitSetWise(ctx, requests);
}
