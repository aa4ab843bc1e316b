/**
 * The general `submitRuns` path: the requests applied one after another in ONE transaction, for
 * batches with a subject (supersession reads and ends other runs, so it cannot be set-wise). The
 * transaction first takes the advisory lock of every subject of the batch, in one order, so two
 * versions of one subject submitted at once cannot both stay live (the newer supersedes the
 * older, whichever commits first) and two batches naming the same subjects never wait in a cycle.
 */
import type pg from 'pg';
import { PipelineError } from '../../core/errors.ts';
import { TERMINAL_RUN_STATUSES, type StageErrorRecord } from '../../core/model.ts';
import type { SubmitRunRequest, SubmitRunResult } from '../../core/ports/jobs.ts';
import type { PgContext } from './context.ts';
import { inTransaction, queryRows } from './database.ts';
import { existingForKey, insertRun, keyHolderVanished } from './insert-run.ts';
import { runFromRow, type RunRow } from './rows.ts';
import { endLockedRuns, lockRuns, supersededError } from './run-state.ts';

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

/** Takes the advisory lock of each distinct subject of the batch, in sorted order. */
async function lockSubjects(ctx: PgContext, client: pg.PoolClient, requests: readonly SubmitRunRequest[]): Promise<void> {
  const keys = new Set(requests.filter(isSubjectRequest).map((r) => JSON.stringify([ctx.schema, r.pipeline, r.subjectId])));
  if (keys.size > 0) await queryRows(client, ctx.sql.lockSubjects, [[...keys]]);
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
  const [newer] = await queryRows<RunRow>(client, ctx.sql.selectNewerSubjectRun, [pipeline, subjectId, subjectVersion]);
  // Born obsolete: recorded (so the submission is visible and idempotent) but never runs.
  const ended: StageErrorRecord | null = newer ? supersededError({ id: newer.id, subjectVersion: newer.subject_version }) : null;
  const older =
    ended === null
      ? await queryRows<{ id: string }>(client, ctx.sql.selectOlderLiveSubjectRuns, [pipeline, subjectId, subjectVersion, TERMINAL_RUN_STATUSES])
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
  if (!existing) throw keyHolderVanished(request, { index });
  return { row: existing, created: false };
}

/** Applies the requests in order on `client`; returns the results and the queues that got a job. */
async function applyInOrder(
  ctx: PgContext,
  client: pg.PoolClient,
  requests: readonly SubmitRunRequest[],
): Promise<{ results: SubmitRunResult[]; woken: Set<string> }> {
  await lockSubjects(ctx, client, requests);
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
export async function submitInOrder(ctx: PgContext, requests: readonly SubmitRunRequest[]): Promise<SubmitRunResult[]> {
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
