/**
 * The SQL of the `tokens` sub-port: API tokens (`api_tokens`, migration 0010). No statement
 * returns `secret_hash`.
 */
import { API_TOKEN_COLUMNS, type ApiTokenRow } from '../../shared/api-token-rows.ts';
import type { SqliteDatabase } from '../connection.ts';

/** In: the token's fields and now. Out: the stored row. */
export const INSERT_API_TOKEN = `
  INSERT INTO api_tokens (id, tenant, name, scopes, secret_hash, last4, created_at, expires_at, revoked_at)
  VALUES (@id, @tenant, @name, @scopes, @secret_hash, @last4, @now, @expires_at, NULL)
  RETURNING ${API_TOKEN_COLUMNS}`;

/** In: secret hash. Out: the token's row or nothing (the unique index on secret_hash). */
export const SELECT_API_TOKEN_BY_HASH = `SELECT ${API_TOKEN_COLUMNS} FROM api_tokens WHERE secret_hash = ?`;

/** Out: every token's row, oldest first (ids are time-ordered). */
export const SELECT_API_TOKENS = `SELECT ${API_TOKEN_COLUMNS} FROM api_tokens ORDER BY id`;

/** In: id, now. Out: the token's row after the revoke (the first revoked_at kept), or nothing when unknown. */
export const REVOKE_API_TOKEN = `
  UPDATE api_tokens SET revoked_at = coalesce(revoked_at, @now) WHERE id = @id
  RETURNING ${API_TOKEN_COLUMNS}`;

/** Out: one row `{found: 1}` when any token exists, else nothing (reads at most one row). */
export const SELECT_ANY_API_TOKEN = 'SELECT 1 AS found FROM api_tokens LIMIT 1';

/** The columns an insert binds. */
interface InsertApiTokenParams {
  id: string;
  tenant: string;
  name: string | null;
  scopes: string;
  secret_hash: string;
  last4: string;
  now: number;
  expires_at: number | null;
}

/** Prepares the statements of API tokens; the schema must be migrated first. */
export function prepareTokensStatements(db: SqliteDatabase) {
  return {
    insertApiToken: db.prepare<InsertApiTokenParams, ApiTokenRow>(INSERT_API_TOKEN),
    selectApiTokenByHash: db.prepare<[secretHash: string], ApiTokenRow>(SELECT_API_TOKEN_BY_HASH),
    selectApiTokens: db.prepare<[], ApiTokenRow>(SELECT_API_TOKENS),
    revokeApiToken: db.prepare<{ id: string; now: number }, ApiTokenRow>(REVOKE_API_TOKEN),
    selectAnyApiToken: db.prepare<[], { found: number }>(SELECT_ANY_API_TOKEN),
  };
}
