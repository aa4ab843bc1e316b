/**
 * The SQL of the SQLite store for remembered client requests (`request_records`, migration
 * 0003), as named constants prepared once per connection by `statements.ts`.
 */

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
