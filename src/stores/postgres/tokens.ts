/**
 * The `tokens` sub-port of the PostgreSQL store: API tokens in `api_tokens`, each with the sha256
 * of its secret (never the secret). Every method is one statement (sql/tokens.ts).
 */
import { NotFoundError } from '../../core/errors.ts';
import type { ApiToken, NewApiToken, TokensPort } from '../../core/ports/tokens.ts';
import { apiTokenFromRow, scopesText, type ApiTokenRow } from '../shared/api-token-rows.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';

async function createToken(ctx: PgContext, token: NewApiToken): Promise<ApiToken> {
  const [row] = await queryRows<ApiTokenRow>(ctx.pool, ctx.sql.tokens.insertApiToken, [
    ctx.now(),
    ctx.ids.next('tok'),
    token.tenant,
    token.name,
    scopesText(token.scopes),
    token.secretHash,
    token.last4,
    token.expiresAt,
  ]);
  if (!row) throw new Error('the token insert returned no row');
  return apiTokenFromRow(row);
}

async function revokeToken(ctx: PgContext, id: string): Promise<ApiToken> {
  const [row] = await queryRows<ApiTokenRow>(ctx.pool, ctx.sql.tokens.revokeApiToken, [ctx.now(), id]);
  if (!row) throw new NotFoundError('token', id);
  return apiTokenFromRow(row);
}

/** API tokens over the context's pool. */
export function createTokensPort(ctx: PgContext): TokensPort {
  return ctx.port<TokensPort>({
    create: (token) => createToken(ctx, token),
    getByHash: async (secretHash) => {
      const [row] = await queryRows<ApiTokenRow>(ctx.pool, ctx.sql.tokens.getApiTokenByHash, [secretHash]);
      return row ? apiTokenFromRow(row) : null;
    },
    list: async () => (await queryRows<ApiTokenRow>(ctx.pool, ctx.sql.tokens.listApiTokens, [])).map(apiTokenFromRow),
    revoke: (id) => revokeToken(ctx, id),
    exist: async () => (await queryRows<{ found: boolean }>(ctx.pool, ctx.sql.tokens.anyApiToken, []))[0]?.found === true,
  });
}
