/**
 * The `tokens` sub-port of the Redis store: API tokens, each with the sha256 of its secret (never
 * the secret). Every method is one script (routines/tokens-*.lua, keys in lib-tokens.lua).
 */
import type { ApiToken, TokenScope, TokensPort } from '../../core/ports/tokens.ts';
import { scopesText } from '../shared/api-token-rows.ts';
import type { RedisContext } from './context.ts';
import { fieldsOf, listOf, numeric, required, requiredNumber, text, type FlatHash } from './rows.ts';

/** A stored token (flat HGETALL, see lib-tokens.lua) as an {@link ApiToken}; its hash stays behind. */
function tokenFrom(flat: FlatHash): ApiToken {
  const f = fieldsOf(flat);
  const scopes = required(f, 'scopes');
  return {
    id: required(f, 'id'),
    tenant: required(f, 'tenant'),
    name: text(f, 'name'),
    scopes: scopes === '' ? [] : (scopes.split(',') as TokenScope[]),
    last4: required(f, 'last4'),
    createdAt: requiredNumber(f, 'createdAt'),
    expiresAt: numeric(f, 'expiresAt'),
    revokedAt: numeric(f, 'revokedAt'),
  };
}

/** API tokens on Redis. */
export function createTokensPort(ctx: RedisContext): TokensPort {
  return ctx.port<TokensPort>({
    create: async (token) =>
      tokenFrom(
        await ctx.call<FlatHash>('tokens-create', [
          ctx.ids.next('tok'),
          token.tenant,
          token.name === null ? '0' : '1',
          token.name ?? '',
          scopesText(token.scopes),
          token.secretHash,
          token.last4,
          token.expiresAt === null ? '' : String(token.expiresAt),
        ]),
      ),
    getByHash: async (secretHash) => {
      const flat = await ctx.call<FlatHash | null>('tokens-get-by-hash', [secretHash]);
      return flat === null ? null : tokenFrom(flat);
    },
    list: async () => listOf(await ctx.call<FlatHash[] | Record<string, never>>('tokens-list')).map(tokenFrom),
    revoke: async (id) => tokenFrom(await ctx.call<FlatHash>('tokens-revoke', [id])),
    exist: () => ctx.call<boolean>('tokens-exist'),
  });
}
