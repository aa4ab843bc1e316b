/**
 * API token secrets: how one is made, how it is hashed for the store, and how scopes are read and
 * checked. A secret is `kiln_` plus 43 base64url characters (256 random bits from Web Crypto).
 *
 * The store keeps sha256(secret), not a password hash (bcrypt, scrypt, argon2): those are slow on
 * purpose to make guessing a low-entropy password expensive, but a 256-bit random secret cannot
 * be guessed however fast the hash is, and a slow hash on every request (or a cache of it) would
 * cost CPU for nothing. sha256 also lets the store find a token by its hash in one indexed read.
 */
import { sha256Hex } from './canonical.ts';
import { ValidationError } from './errors.ts';
import { TOKEN_SCOPES, TokenScope, type ApiToken } from './ports/tokens.ts';

/** Every secret starts with this, so leaked tokens are easy to find (secret scanners, logs). */
export const TOKEN_PREFIX = 'kiln_';

/** Bytes of randomness in a secret. */
const SECRET_BYTES = 32;

/** A secret as issued: `kiln_` and 43 base64url characters. */
const SECRET_PATTERN = /^kiln_[A-Za-z0-9_-]{43}$/;

/** A new secret token, its hash for the store and its last four characters for listings. */
export function newTokenSecret(): { secret: string; secretHash: string; last4: string } {
  const bytes = new Uint8Array(SECRET_BYTES);
  globalThis.crypto.getRandomValues(bytes);
  const secret = `${TOKEN_PREFIX}${Buffer.from(bytes).toString('base64url')}`;
  return { secret, secretHash: hashTokenSecret(secret), last4: secret.slice(-4) };
}

/** The hash the store keeps of a secret (sha256 hex). */
export function hashTokenSecret(secret: string): string {
  return sha256Hex(secret);
}

/** True when `text` has the shape of an issued secret (checked before any hashing or lookup). */
export function looksLikeTokenSecret(text: string): boolean {
  return SECRET_PATTERN.test(text);
}

/** Reads `read,submit` into scopes in canonical order; unknown or no scopes are a `ValidationError`. */
export function parseTokenScopes(raw: string): TokenScope[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !(TOKEN_SCOPES as readonly string[]).includes(n));
  if (unknown.length > 0) throw new ValidationError(`unknown scope ${unknown.map((u) => JSON.stringify(u)).join(', ')}: scopes are ${TOKEN_SCOPES.join(', ')}`, { details: { unknown } });
  if (names.length === 0) throw new ValidationError(`at least one scope is needed: ${TOKEN_SCOPES.join(', ')}`);
  return TOKEN_SCOPES.filter((s) => names.includes(s));
}

/** True when a token with `scopes` may do what `needed` allows (`admin` allows everything). */
export function grantsScope(scopes: readonly TokenScope[], needed: TokenScope): boolean {
  return scopes.includes(needed) || scopes.includes(TokenScope.admin);
}

/** Why a token is refused at `now`, or null when it is usable. */
export function tokenRefusal(token: ApiToken, now: number): 'revoked' | 'expired' | null {
  if (token.revokedAt !== null) return 'revoked';
  if (token.expiresAt !== null && token.expiresAt <= now) return 'expired';
  return null;
}
