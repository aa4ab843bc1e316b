/**
 * Remembered client requests (`Idempotency-Key`): the first request with `(scope, key)` is stored
 * once and never changed; later ones read it back and compare hashes themselves. Remembering is one
 * call of the `remember_request` function (migration 0006); reading one is a plain lookup.
 */
import type { RequestRecord } from '../../core/ports/requests.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';
import { requestRecordFromRow, toJsonText, type RequestRecordRow } from './rows.ts';

/**
 * Stores `record` stamped with the store clock unless `(scope, key)` exists (two processes cannot
 * both create it: the insert's unique key decides), and returns the stored record with whether
 * this call created it.
 */
export async function rememberRequest(
  ctx: PgContext,
  record: Omit<RequestRecord, 'createdAt'>,
): Promise<{ created: boolean; record: RequestRecord }> {
  const [row] = await queryRows<RequestRecordRow & { created: boolean }>(ctx.pool, ctx.sql.rememberRequest, [
    ctx.now(),
    record.scope,
    record.key,
    record.requestHash,
    toJsonText(record.value),
  ]);
  if (!row) throw new Error('remember_request returned no row');
  return { created: row.created, record: requestRecordFromRow(row) };
}

/** The remembered request `(scope, key)`, or null; changes nothing. */
export async function getRequest(ctx: PgContext, scope: string, key: string): Promise<RequestRecord | null> {
  const [row] = await queryRows<RequestRecordRow>(ctx.pool, ctx.sql.getRequest, [scope, key]);
  return row ? requestRecordFromRow(row) : null;
}
