/**
 * Statements of the `tokens` sub-port: API tokens (`api_tokens`, migration 0015). No statement
 * returns `secret_hash`.
 */
import { API_TOKEN_COLUMNS } from '../../shared/api-token-rows.ts';
import { nowFrom, statement, type Statement } from '../database.ts';

/** In: now, id, tenant, name, scopes, secret hash, last4, expires_at. Out: the stored row. */
export const insertApiToken = (s: string): Statement =>
  statement(
    'insert_api_token',
    `INSERT INTO ${s}.api_tokens (id, tenant, name, scopes, secret_hash, last4, created_at, expires_at, revoked_at)
     VALUES ($2, $3, $4, $5, $6, $7, ${nowFrom(1)}, $8::bigint, NULL)
     RETURNING ${API_TOKEN_COLUMNS}`,
  );

/** In: secret hash. Out: the token's row or nothing (the unique index on secret_hash). */
export const getApiTokenByHash = (s: string): Statement =>
  statement('get_api_token_by_hash', `SELECT ${API_TOKEN_COLUMNS} FROM ${s}.api_tokens WHERE secret_hash = $1`);

/** Out: every token's row, oldest first (ids are time-ordered). */
export const listApiTokens = (s: string): Statement => statement('list_api_tokens', `SELECT ${API_TOKEN_COLUMNS} FROM ${s}.api_tokens ORDER BY id`);

/**
 * In: now, id. Out: the token's row after the revoke (the first revoked_at kept), or nothing when
 * unknown. One statement: concurrent revokes queue on the row lock; the first stamps the time.
 */
export const revokeApiToken = (s: string): Statement =>
  statement(
    'revoke_api_token',
    `UPDATE ${s}.api_tokens SET revoked_at = coalesce(revoked_at, ${nowFrom(1)}) WHERE id = $2
     RETURNING ${API_TOKEN_COLUMNS}`,
  );

/** Out: one row: whether any token exists (reads at most one index entry). */
export const anyApiToken = (s: string): Statement => statement('any_api_token', `SELECT EXISTS (SELECT 1 FROM ${s}.api_tokens) AS found`);
