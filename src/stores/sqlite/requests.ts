/**
 * The `requests` sub-port of the SQLite store, remembered client requests (`Idempotency-Key`):
 * the first request with `(scope, key)` is stored once and never changed; later ones read it
 * back and compare hashes themselves.
 */
import type { RequestRecord, RequestsPort } from '../../core/ports/requests.ts';
import type { SqliteContext } from './context.ts';
import { requestRecordFromRow, toJson } from './rows.ts';

/**
 * Stores `record` stamped with the store clock unless `(scope, key)` exists, inside the caller's
 * BEGIN IMMEDIATE transaction (so two processes cannot both create it), and returns the stored
 * record with whether this call created it.
 */
function rememberRequest(
  ctx: SqliteContext,
  record: Omit<RequestRecord, 'createdAt'>,
): { created: boolean; record: RequestRecord } {
  const sql = ctx.sql();
  const { changes } = sql.insertRequestRecord.run({
    scope: record.scope,
    key: record.key,
    request_hash: record.requestHash,
    value: toJson(record.value),
    now: ctx.clock.now(),
  });
  const row = sql.selectRequestRecord.get(record.scope, record.key);
  if (!row) throw new Error(`request record (${record.scope}, ${record.key}) is missing after its insert`);
  return { created: changes === 1, record: requestRecordFromRow(row) };
}

/** The stored record of `(scope, key)`, or null. */
function getRequest(ctx: SqliteContext, scope: string, key: string): RequestRecord | null {
  const row = ctx.sql().selectRequestRecord.get(scope, key);
  return row ? requestRecordFromRow(row) : null;
}

/** Remembered client requests over `ctx`. */
export function createRequestsPort(ctx: SqliteContext): RequestsPort {
  return {
    remember: ctx.write((record) => rememberRequest(ctx, record)),
    get: ctx.outside((scope, key) => getRequest(ctx, scope, key)),
  };
}
