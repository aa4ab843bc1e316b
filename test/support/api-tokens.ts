/** Creating API tokens straight through a store's `tokens` port, as `kiln tokens create` does. */
import type { Store } from '../../src/core/ports/store.ts';
import type { ApiToken, TokenScope } from '../../src/core/ports/tokens.ts';
import { newTokenSecret } from '../../src/core/tokens.ts';

/** A token and its secret (what `kiln tokens create` prints once). */
export interface IssuedToken {
  token: ApiToken;
  secret: string;
  /** `{ authorization: 'Bearer <secret>' }`. */
  headers: { authorization: string };
}

/** Creates a token of `tenant` with `scopes` in `store`. */
export async function issueToken(store: Store, scopes: readonly TokenScope[], options: { tenant?: string; expiresAt?: number | null; name?: string } = {}): Promise<IssuedToken> {
  const { secret, secretHash, last4 } = newTokenSecret();
  const token = await store.tokens.create({
    tenant: options.tenant ?? 'acme',
    name: options.name ?? null,
    scopes,
    secretHash,
    last4,
    expiresAt: options.expiresAt ?? null,
  });
  return { token, secret, headers: { authorization: `Bearer ${secret}` } };
}
