/**
 * The `api_tokens` row both SQL stores keep (migrations: SQLite 0010, PostgreSQL 0015) and its
 * mapping to {@link ApiToken}. Scopes are stored as one comma-separated text in canonical order
 * (`read,operate`): a closed set of comma-free names, read back whole.
 */
import { TOKEN_SCOPES, type ApiToken, type TokenScope } from '../../core/ports/tokens.ts';

/** An `api_tokens` row without `secret_hash` (reads never select it). */
export interface ApiTokenRow {
  id: string;
  tenant: string;
  name: string | null;
  scopes: string;
  last4: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

/** The columns of {@link ApiTokenRow}, for SELECT and RETURNING lists. */
export const API_TOKEN_COLUMNS = 'id, tenant, name, scopes, last4, created_at, expires_at, revoked_at';

/** Scopes as stored. */
export function scopesText(scopes: readonly TokenScope[]): string {
  return TOKEN_SCOPES.filter((s) => scopes.includes(s)).join(',');
}

/** Row -> `ApiToken` (numbers may arrive as strings from `bigint` columns of drivers that do not parse them). */
export function apiTokenFromRow(row: ApiTokenRow): ApiToken {
  return {
    id: row.id,
    tenant: row.tenant,
    name: row.name,
    scopes: row.scopes === '' ? [] : (row.scopes.split(',') as TokenScope[]),
    last4: row.last4,
    createdAt: Number(row.created_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}
