/**
 * The `tokens` sub-port of the SQLite store: API tokens in `api_tokens`, each with the sha256 of
 * its secret (never the secret). Writes run in BEGIN IMMEDIATE transactions, reads in deferred ones.
 */
import { NotFoundError } from '../../core/errors.ts';
import type { ApiToken, NewApiToken, TokensPort } from '../../core/ports/tokens.ts';
import { apiTokenFromRow, scopesText } from '../shared/api-token-rows.ts';
import type { SqliteContext } from './context.ts';

function createToken(ctx: SqliteContext, token: NewApiToken): ApiToken {
  const row = ctx.sql().insertApiToken.get({
    id: ctx.ids.next('tok'),
    tenant: token.tenant,
    name: token.name,
    scopes: scopesText(token.scopes),
    secret_hash: token.secretHash,
    last4: token.last4,
    now: ctx.clock.now(),
    expires_at: token.expiresAt,
  });
  if (!row) throw new Error('the token insert returned no row');
  return apiTokenFromRow(row);
}

function revokeToken(ctx: SqliteContext, id: string): ApiToken {
  const row = ctx.sql().revokeApiToken.get({ id, now: ctx.clock.now() });
  if (!row) throw new NotFoundError('token', id);
  return apiTokenFromRow(row);
}

/** API tokens over `ctx`. */
export function createTokensPort(ctx: SqliteContext): TokensPort {
  return {
    create: ctx.write((token) => createToken(ctx, token)),
    getByHash: ctx.outside((secretHash) => {
      const row = ctx.sql().selectApiTokenByHash.get(secretHash);
      return row ? apiTokenFromRow(row) : null;
    }),
    list: ctx.read(() => ctx.sql().selectApiTokens.all().map(apiTokenFromRow)),
    revoke: ctx.write((id) => revokeToken(ctx, id)),
    exist: ctx.outside(() => ctx.sql().selectAnyApiToken.get() !== undefined),
  };
}
