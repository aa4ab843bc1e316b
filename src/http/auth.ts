/**
 * Access control of the HTTP API: API tokens (`Authorization: Bearer <token>`) and the scope each
 * route needs. Every route declares its access in ONE place, its route config
 * (`{ config: { scope: 'read' } }`, or `'public'`), read by one `onRequest` hook installed before
 * any route.
 *
 * When tokens are asked for: as soon as any token exists in the store, or when the server listens
 * beyond loopback (a non-loopback server without any token refuses everything but public routes,
 * saying how to create one). A loopback server with no token at all is open, as before tokens.
 *
 * Cost: verified tokens (and unknown ones) are cached in process for `cacheTtlMs` (2 s), so a hot
 * route such as the cached QR GET adds no store round trip; a revoked token is refused within that
 * TTL. "Any token exists" only goes from false to true (tokens are never deleted), so once seen it
 * is never asked again; until then it is asked at most once per TTL.
 *
 * No secret is ever compared here: a presented token is hashed (sha256) and found by its hash,
 * in this cache (a Map) or the store (a unique index). Timing of those lookups can tell at most
 * something about a hash, from which no secret can be derived (the secret has 256 random bits).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenScopeError, StoreUnavailableError, UnauthenticatedError } from '../core/errors.ts';
import { TOKEN_SCOPES, TokenScope, type ApiToken, type TokensPort } from '../core/ports/tokens.ts';
import { TENANT_SEPARATOR } from '../core/tenant-keys.ts';
import { grantsScope, hashTokenSecret, looksLikeTokenSecret, tokenRefusal } from '../core/tokens.ts';

/** What a route needs: a token scope, or nothing (`public`: /healthz, the dashboard's static files). */
export type RouteScope = TokenScope | 'public';

/** The public route access. */
export const PUBLIC = 'public' as const;

/** The route config that declares a route's access, for `app.get(url, { config: access('read') }, …)`. */
export function access(scope: RouteScope): { scope: RouteScope } {
  return { scope };
}

/** Who made an authenticated request (null on an open server). */
export interface RequestAuth {
  tokenId: string;
  tenant: string;
  scopes: readonly TokenScope[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The access this route needs (see src/http/auth.ts); a route without one needs admin. */
    scope?: RouteScope;
  }
  interface FastifyRequest {
    /** The token of the request, once the auth hook accepted it; null when no token was needed. */
    auth: RequestAuth | null;
  }
}

/** Options of {@link installAuth}. */
export interface AuthOptions {
  tokens: TokensPort;
  /** How long a verified (or unknown) token is trusted without asking the store. @default 2000 */
  cacheTtlMs?: number;
  /** Monotonic ms for the cache's age. @default performance.now */
  monotonicMs?: () => number;
  /** Epoch ms for expiry checks. @default Date.now */
  nowMs?: () => number;
  /**
   * A token read the store has not answered within this long fails the request with 503
   * `STORE_UNAVAILABLE` (the request deadline bounds handlers only, not this hook). @default 10000
   */
  storeTimeoutMs?: number;
}

/** The error of a token read the store did not answer in time. */
class TokenCheckTimeout extends StoreUnavailableError {}

/** `read()` bounded by `ms`: past it, {@link TokenCheckTimeout} (the read itself is left to finish). */
function bounded<T>(ms: number, read: () => Promise<T>): () => Promise<T> {
  return () =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new TokenCheckTimeout(`the store did not answer a token check within ${ms} ms`, { details: { timeoutMs: ms, retryAfterMs: 1_000 } })), ms);
      read().then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
}

/** Default of `cacheTtlMs`: a revoked token is refused within 2 s (plus a request). */
export const DEFAULT_TOKEN_CACHE_TTL_MS = 2_000;

/** Most tokens kept in the cache; past it the oldest entry goes (a spray of bad tokens cannot grow memory). */
const CACHE_MAX_ENTRIES = 10_000;

/** A route as the auth hook sees it: method, URL and the access it declared (undefined: none). */
export interface RouteAccess {
  method: string;
  url: string;
  scope: RouteScope | undefined;
}

const routeTables = new WeakMap<FastifyInstance, RouteAccess[]>();

/** Every route registered on `app` (HEAD routes included) with the access it declared, in registration order. */
export function routeAccessTable(app: FastifyInstance): readonly RouteAccess[] {
  return routeTables.get(app) ?? [];
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopbackAddress(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** The scope a request needs: the route's declared one; a route that declares none needs admin. */
function neededScope(request: FastifyRequest): RouteScope | undefined {
  // An unknown URL needs a valid token (any scope), then answers 404: it says nothing to strangers.
  if (request.is404) return undefined;
  return request.routeOptions.config.scope ?? TokenScope.admin;
}

const MISSING = 'this route needs an API token: send "Authorization: Bearer <token>"';
const NONE_YET =
  'this server listens beyond loopback and has no API token yet: create one with `kiln tokens create --tenant <tenant> --scopes read,submit` and send it as "Authorization: Bearer <token>"';

/** Verified tokens by the hash of their secret, each trusted for the TTL; lookups of one hash share one store read. */
function createTokenCache(getByHash: (hash: string) => Promise<ApiToken | null>, ttlMs: number, monotonicMs: () => number) {
  const entries = new Map<string, { at: number; token: Promise<ApiToken | null> }>();
  return (hash: string): Promise<ApiToken | null> => {
    const now = monotonicMs();
    const hit = entries.get(hash);
    if (hit && now - hit.at < ttlMs) return hit.token;
    entries.delete(hash);
    if (entries.size >= CACHE_MAX_ENTRIES) {
      const oldest = entries.keys().next();
      if (!oldest.done) entries.delete(oldest.value);
    }
    const token = getByHash(hash);
    entries.set(hash, { at: now, token });
    // A failed read is not cached: the next request asks again.
    token.catch(() => {
      if (entries.get(hash)?.token === token) entries.delete(hash);
    });
    return token;
  };
}

/** "Any token exists", asked at most once per TTL until it is true, then never again. */
function createTokensExist(exist: () => Promise<boolean>, ttlMs: number, monotonicMs: () => number) {
  let known = false;
  let last: { at: number; answer: Promise<boolean> } | undefined;
  return async (): Promise<boolean> => {
    if (known) return true;
    const now = monotonicMs();
    if (!last || now - last.at >= ttlMs) {
      const answer = exist();
      answer.catch(() => (last = undefined));
      last = { at: now, answer };
    }
    known = await last.answer;
    return known;
  };
}

/**
 * Installs the auth hook and the route table on the root instance; call before registering any
 * route (hooks apply to routes registered after them).
 */
export function installAuth(app: FastifyInstance, options: AuthOptions): void {
  const ttlMs = options.cacheTtlMs ?? DEFAULT_TOKEN_CACHE_TTL_MS;
  const monotonicMs = options.monotonicMs ?? (() => performance.now());
  const nowMs = options.nowMs ?? Date.now;
  const storeTimeoutMs = options.storeTimeoutMs ?? 10_000;
  const { tokens } = options;
  const lookup = createTokenCache((hash) => bounded(storeTimeoutMs, () => tokens.getByHash(hash))(), ttlMs, monotonicMs);
  const tokensExist = createTokensExist(bounded(storeTimeoutMs, () => tokens.exist()), ttlMs, monotonicMs);
  /**
   * On loopback, whether tokens are asked for. A store that does not answer in time while this
   * process never saw a token counts as "none", as before tokens: the route then meets the same
   * store and its own deadline answers 503 (so a route's documented wait, such as the QR wait, is
   * still honoured). A store that fails outright fails the request.
   */
  const loopbackNeedsTokens = (): Promise<boolean> =>
    tokensExist().catch((err: unknown) => {
      if (err instanceof TokenCheckTimeout) {
        app.log.warn({ err }, 'the store did not answer whether API tokens exist; serving as a loopback server without tokens');
        return false;
      }
      throw err;
    });

  const table: RouteAccess[] = [];
  routeTables.set(app, table);
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope;
    if (scope !== undefined && scope !== PUBLIC && !(TOKEN_SCOPES as readonly string[]).includes(scope)) {
      throw new Error(`route ${String(route.method)} ${route.url} declares an unknown scope ${JSON.stringify(scope)}`);
    }
    for (const method of [route.method].flat()) table.push({ method, url: route.url, scope });
  });

  // Whether the server listens beyond loopback; fixed once it listens (inject never listens).
  let beyond: boolean | undefined;
  const listensBeyondLoopback = (): boolean => {
    if (beyond !== undefined) return beyond;
    const address = app.server.address();
    if (address === null) return false;
    beyond = typeof address === 'string' ? false : !isLoopbackAddress(address.address);
    return beyond;
  };

  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request) => {
    const needed = neededScope(request);
    if (needed === PUBLIC) return;
    const header = request.headers.authorization;
    const beyondLoopback = listensBeyondLoopback();
    if (header === undefined) {
      const exist = beyondLoopback ? await tokensExist().catch(() => true) : await loopbackNeedsTokens();
      if (!beyondLoopback && !exist) return;
      throw new UnauthenticatedError(exist ? MISSING : NONE_YET, { details: { reason: exist ? 'missing' : 'no_tokens' } });
    }
    // A loopback server with no token at all is open: a header it cannot check changes nothing.
    if (!beyondLoopback && !(await loopbackNeedsTokens())) return;
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match?.[1]) throw new UnauthenticatedError('the Authorization header must be "Bearer <token>"', { details: { reason: 'malformed' } });
    const secret = match[1];
    const token = looksLikeTokenSecret(secret) ? await lookup(hashTokenSecret(secret)) : null;
    if (!token) throw new UnauthenticatedError('the API token is not known to this server', { details: { reason: 'unknown' } });
    const refusal = tokenRefusal(token, nowMs());
    if (refusal) throw new UnauthenticatedError(`the API token was ${refusal}`, { details: { reason: refusal, tokenId: token.id } });
    // A tenant's own ids are kept as `<tenant>/<id>`: a tenant name holding the separator (a token
    // made before `kiln tokens create` refused one) could reach another tenant's keys.
    if (token.tenant.includes(TENANT_SEPARATOR)) {
      throw new UnauthenticatedError(`the API token's tenant ${JSON.stringify(token.tenant)} contains "${TENANT_SEPARATOR}", which tenant names cannot: create a new token`, {
        details: { reason: 'invalid_tenant', tokenId: token.id },
      });
    }
    if (needed !== undefined && !grantsScope(token.scopes, needed)) throw new ForbiddenScopeError(needed, token.scopes, { details: { tokenId: token.id } });
    request.auth = { tokenId: token.id, tenant: token.tenant, scopes: token.scopes };
  });
}
