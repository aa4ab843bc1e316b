/**
 * The SQL of the `requests` sub-port: remembered client requests (`request_records`, migration
 * 0003).
 */
import type { SqliteDatabase } from '../connection.ts';
import type { RequestRecordRow } from '../rows.ts';

/**
 * In: scope, key, request hash, value, now. Changes one row when `(scope, key)` is new; nothing
 * when it exists: the first request's record is kept as it was.
 */
export const INSERT_REQUEST_RECORD = `
  INSERT INTO request_records (scope, key, request_hash, value, created_at)
  VALUES (@scope, @key, @request_hash, @value, @now)
  ON CONFLICT DO NOTHING`;

/** In: scope, key. Out: the stored record's row or nothing. */
export const SELECT_REQUEST_RECORD = 'SELECT * FROM request_records WHERE scope = ? AND key = ?';

/** Prepares the statements of remembered requests; the schema must be migrated first. */
export function prepareRequestsStatements(db: SqliteDatabase) {
  return {
    insertRequestRecord: db.prepare<Omit<RequestRecordRow, 'created_at'> & { now: number }>(INSERT_REQUEST_RECORD),
    selectRequestRecord: db.prepare<[scope: string, key: string], RequestRecordRow>(SELECT_REQUEST_RECORD),
  };
}
