/**
 * The `tokens` sub-port of the memory store: API tokens by id, each with the hash of its secret
 * (never the secret). Tokens are never deleted; revoking stamps `revokedAt` once.
 */
import { NotFoundError, ValidationError } from '../../core/errors.ts';
import { TOKEN_SCOPES, type ApiToken, type NewApiToken, type TokensPort } from '../../core/ports/tokens.ts';
import type { MemoryContext } from './context.ts';
import type { MemoryState } from './state.ts';

/** The token without its hash. */
function publicToken(stored: ApiToken & { secretHash: string }): ApiToken {
  const { secretHash: _hash, ...token } = stored;
  return token;
}

/** Stores a new token; a hash already stored is refused (the SQL stores' unique key). */
function createToken(state: MemoryState, token: NewApiToken): ApiToken {
  if (state.apiTokenIds.has(token.secretHash)) throw new ValidationError('a token with this secret hash exists');
  const stored = {
    id: state.ids.next('tok'),
    tenant: token.tenant,
    name: token.name,
    scopes: TOKEN_SCOPES.filter((s) => token.scopes.includes(s)),
    last4: token.last4,
    createdAt: state.clock.now(),
    expiresAt: token.expiresAt,
    revokedAt: null,
    secretHash: token.secretHash,
  };
  state.apiTokens.set(stored.id, stored);
  state.apiTokenIds.set(stored.secretHash, stored.id);
  return publicToken(stored);
}

function getByHash(state: MemoryState, secretHash: string): ApiToken | null {
  const stored = state.apiTokens.get(state.apiTokenIds.get(secretHash) ?? '');
  return stored ? publicToken(stored) : null;
}

function revokeToken(state: MemoryState, id: string): ApiToken {
  const stored = state.apiTokens.get(id);
  if (!stored) throw new NotFoundError('token', id);
  stored.revokedAt ??= state.clock.now();
  return publicToken(stored);
}

/** API tokens of the state. */
export function createTokensPort(ctx: MemoryContext): TokensPort {
  const { state } = ctx;
  return {
    create: ctx.atomic((token) => createToken(state, token)),
    getByHash: ctx.atomic((secretHash) => getByHash(state, secretHash)),
    // Ids are time-ordered and Map order is insertion order: both are creation order.
    list: ctx.atomic(() => [...state.apiTokens.values()].map(publicToken).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))),
    revoke: ctx.atomic((id) => revokeToken(state, id)),
    exist: ctx.atomic(() => state.apiTokens.size > 0),
  };
}
