/**
 * Ending runs early (cancel, supersede, drain) so that no job of them survives, inside the
 * caller's transaction, with locks taken in the store's one order: the runs' jobs first, then
 * the runs (see migrations/0001), so it never waits in a cycle with a claim or a commit.
 */
import type pg from 'pg';
import { ErrorClass } from '../../../core/errors.ts';
import type { RunStatus, StageErrorRecord } from '../../../core/model.ts';
import type { PgContext } from '../context.ts';
import { queryRows } from '../database.ts';
import { errorJsonText, type RunRow } from '../rows.ts';

/** The error a cancelled (or drained) run carries. */
export function cancelledError(reason: string): StageErrorRecord {
  return { class: ErrorClass.permanent, code: 'CANCELLED', message: reason };
}

/** The error recorded on a run that a newer version replaced. */
export function supersededError(by: { id: string; subjectVersion: number | null }): StageErrorRecord {
  return {
    class: ErrorClass.permanent,
    code: 'SUPERSEDED',
    message: `superseded by run ${by.id} (version ${String(by.subjectVersion)})`,
  };
}

/** Locks the runs (their jobs first) and returns them as they are now, by id. */
export async function lockRuns(ctx: PgContext, client: pg.PoolClient, runIds: readonly string[]): Promise<Map<string, RunRow>> {
  await queryRows(client, ctx.sql.jobs.lockJobsOfRuns, [runIds]);
  const rows = await queryRows<RunRow>(client, ctx.sql.jobs.lockRuns, [runIds]);
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * Ends the given runs (already locked by {@link lockRuns}) with `status` and `error`: their jobs
 * deleted and remembered in retired_jobs (so their holders learn `cancelled`), stages that had
 * not succeeded `skipped`. Returns the ended rows.
 */
export async function endLockedRuns(
  ctx: PgContext,
  client: pg.PoolClient,
  runIds: readonly string[],
  status: RunStatus,
  error: StageErrorRecord,
): Promise<RunRow[]> {
  if (runIds.length === 0) return [];
  return queryRows<RunRow>(client, ctx.sql.jobs.endRuns, [ctx.now(), runIds, status, errorJsonText(error)]);
}
