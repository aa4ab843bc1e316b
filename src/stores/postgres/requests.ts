/**
 * The `requests` sub-port of the PostgreSQL store: remembered client requests
 * (`Idempotency-Key`). The first request with `(scope, key)` is stored once and never changed;
 * later ones read it back and compare hashes themselves. Remembering is one call of the
 * `remember_request` function (routines/requests.sql); reading one is a plain lookup.
 */
import type { RequestRecord, RequestsPort } from '../../core/ports/requests.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';
import { requestRecordFromRow, toJsonText, type RequestRecordRow } from './rows.ts';

/**
 * Stores `record` stamped with the store clock unless `(scope, key)` exists (two processes cannot
 * both create it: the insert's unique key decides), and returns the stored record with whether
 * this call created it.
 */
async function rememberRequest(ctx: PgContext, record: Omit<RequestRecord, 'createdAt'>): Promise<{ created: boolean; record: RequestRecord }> {
  const [row] = await queryRows<RequestRecordRow & { created: boolean }>(ctx.pool, ctx.sql.requests.rememberRequest, [
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
async function getRequest(ctx: PgContext, scope: string, key: string): Promise<RequestRecord | null> {
  const [row] = await queryRows<RequestRecordRow>(ctx.pool, ctx.sql.requests.getRequest, [scope, key]);
  return row ? requestRecordFromRow(row) : null;
}

/** Remembered client requests over the context's pool. */
export function createRequestsPort(ctx: PgContext): RequestsPort {
  return ctx.port<RequestsPort>({
    remember: (record) => rememberRequest(ctx, record),
    get: (scope, key) => getRequest(ctx, scope, key),
  });
}
