/**
 * The `tokens` sub-port: API tokens for the HTTP API. The store keeps a token's record and a hash
 * of its secret, never the secret itself (the secret is shown once, by `kiln tokens create`).
 * Tokens are never deleted: a revoked or expired token stays listed, so "any token exists" only
 * ever goes from false to true and revoking the last token cannot open a server again.
 */

/** What a token allows. `admin` allows everything; the others are independent of each other. */
export const TokenScope = {
  /** GETs of runs, jobs, queues, assets, QR images, publications, the ledger and dashboard data. */
  read: 'read',
  /** Create work: POST runs, PUT assets, QR requests. */
  submit: 'submit',
  /** Operator actions: cancel, replay, resume runs; pause, resume, drain queues. */
  operate: 'operate',
  /** Everything. */
  admin: 'admin',
} as const;
export type TokenScope = (typeof TokenScope)[keyof typeof TokenScope];

/** Every scope, in the order they are listed. */
export const TOKEN_SCOPES: readonly TokenScope[] = Object.values(TokenScope);

/** An API token as the store keeps it, minus the hash of its secret. */
export interface ApiToken {
  /** `tok_…`, time-ordered. */
  id: string;
  /** The tenant whose work the token acts on. */
  tenant: string;
  /** A label for people (`ci`, `dashboard alice`), or null. */
  name: string | null;
  /** Granted scopes, in {@link TOKEN_SCOPES} order, no duplicates. */
  scopes: TokenScope[];
  /** The last four characters of the secret, to tell tokens apart in listings. */
  last4: string;
  createdAt: number;
  /** Epoch ms after which the token is refused, or null (never expires). */
  expiresAt: number | null;
  /** When it was revoked, or null. */
  revokedAt: number | null;
}

/** What {@link TokensPort.create} stores. */
export interface NewApiToken {
  tenant: string;
  name: string | null;
  scopes: readonly TokenScope[];
  /** sha256 hex of the whole secret token (see src/core/tokens.ts): unique. */
  secretHash: string;
  last4: string;
  expiresAt: number | null;
}

/** API tokens; each method is one atomic unit. */
export interface TokensPort {
  /** Stores a new token (id from the store's id source, `createdAt` = now) and returns it. */
  create(token: NewApiToken): Promise<ApiToken>;

  /**
   * The token whose secret hashes to `secretHash`, revoked and expired ones included (the caller
   * decides), or null; changes nothing.
   */
  getByHash(secretHash: string): Promise<ApiToken | null>;

  /** Every token, oldest first (by id), revoked and expired ones included. */
  list(): Promise<ApiToken[]>;

  /**
   * Revokes the token `id` (`revokedAt` = now) and returns it; revoking a revoked token changes
   * nothing (the first `revokedAt` stays). An unknown id is `NotFoundError`.
   */
  revoke(id: string): Promise<ApiToken>;

  /** True once any token was ever created (revoked and expired ones count): a cheap existence check. */
  exist(): Promise<boolean>;
}
