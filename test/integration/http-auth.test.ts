/**
 * API tokens on the HTTP API. A table-driven walk of EVERY route fastify registered (the table
 * comes from fastify's onRoute, so a new route without a declared scope fails here): without a
 * token 401, with a token lacking the route's scope 403 (naming it), with that scope neither.
 * Then the server modes: loopback with no token is open as before; a server listening on a
 * non-loopback address with no token answers 401 everywhere but the public routes; token refusals
 * (malformed, unknown, expired, revoked) with WWW-Authenticate; a revoked token stops working
 * within 5 s on a real server whose other store handle revoked it; the cached QR GET costs no store
 * round trip for its token; `/metrics` needs a token only when configured so.
 */
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Store } from '../../src/core/ports/store.ts';
import { TOKEN_SCOPES, TokenScope, type TokensPort } from '../../src/core/ports/tokens.ts';
import { routeAccessTable, type RouteScope } from '../../src/http/auth.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { issueToken, type IssuedToken } from '../support/api-tokens.ts';
import { openHttpHarness, postJson, type HttpHarness } from './http-harness.ts';

/** The access each route needs, by `METHOD url` (HEAD routes need what their GET needs). */
const EXPECTED: Readonly<Record<string, RouteScope>> = {
  'GET /healthz': 'public',
  'GET /metrics': 'public',
  'GET /dashboard': 'public',
  'GET /dashboard/': 'public',
  'GET /dashboard/*': 'public',
  'POST /v1/runs': TokenScope.submit,
  'GET /v1/runs': TokenScope.read,
  'GET /v1/runs/:id': TokenScope.read,
  'GET /v1/runs/:id/attempts': TokenScope.read,
  'POST /v1/runs/:id/cancel': TokenScope.operate,
  'POST /v1/runs/:id/resume': TokenScope.operate,
  'GET /v1/jobs': TokenScope.read,
  'GET /v1/jobs/:id': TokenScope.read,
  'POST /v1/jobs/:id/replay': TokenScope.operate,
  'GET /v1/queues': TokenScope.read,
  'GET /v1/queues/activity': TokenScope.read,
  'POST /v1/queues/:queue/pause': TokenScope.admin,
  'POST /v1/queues/:queue/resume': TokenScope.admin,
  'POST /v1/queues/:queue/drain': TokenScope.admin,
  'GET /v1/verify': TokenScope.admin,
  'GET /v1/dead-letters': TokenScope.read,
  'GET /v1/cache/stats': TokenScope.read,
  'GET /v1/cache/entries': TokenScope.admin,
  'GET /v1/publications': TokenScope.read,
  'GET /v1/artifacts/:ref': TokenScope.read,
  'POST /v1/qr': TokenScope.submit,
  'GET /v1/qr': TokenScope.submit,
  'GET /v1/qr/:hash': TokenScope.read,
  'GET /v1/requests/:id': TokenScope.read,
  'PUT /v1/assets/:id': TokenScope.submit,
  'GET /v1/assets/:id': TokenScope.read,
  'DELETE /v1/assets/:id': TokenScope.submit,
  'GET /v1/assets/:id/:profile': TokenScope.read,
};

/** A concrete URL for a route pattern. */
function concreteUrl(pattern: string): string {
  return pattern
    .replace(':ref', `sha256:${'0'.repeat(64)}`)
    .replace(':hash', '0'.repeat(64))
    .replace(':queue', 'demo.sleep.prepare')
    .replace(':profile', 'thumb')
    .replace(':id', 'x_1')
    .replace('*', 'dashboard.css');
}

const SCOPED = TOKEN_SCOPES.filter((s) => s !== TokenScope.admin);

/** One token per scope, one with every scope but admin minus each, and an admin token. */
interface Tokens {
  only: Record<TokenScope, IssuedToken>;
  allBut: Record<TokenScope, IssuedToken>;
}

async function issueAll(store: Store): Promise<Tokens> {
  const only = {} as Record<TokenScope, IssuedToken>;
  const allBut = {} as Record<TokenScope, IssuedToken>;
  for (const scope of TOKEN_SCOPES) {
    only[scope] = await issueToken(store, [scope], { name: `only ${scope}` });
    allBut[scope] = await issueToken(store, SCOPED.filter((s) => s !== scope), { name: `all but ${scope}` });
  }
  return { only, allBut };
}

function inject(app: FastifyInstance, method: string, url: string, headers: Record<string, string> = {}) {
  return app.inject({ method: method as InjectOptions['method'], url, headers });
}

/** The first IPv4 address of this machine that is not loopback, if any. */
function nonLoopbackIPv4(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

const sqliteFile = (dir: string) => createSqliteStore({ path: join(dir, 'kiln.db') });

describe('API tokens on every route', () => {
  test('every route fastify registered declares the scope this table says, HEAD routes the same as their GET', async () => {
    const h = await openHttpHarness(() => createMemoryStore());
    try {
      await h.app.ready();
      const table = routeAccessTable(h.app);
      assert.ok(table.length >= Object.keys(EXPECTED).length);
      const declared: Record<string, RouteScope | undefined> = {};
      for (const { method, url, scope } of table) declared[`${method === 'HEAD' ? 'GET' : method} ${url}`] = scope;
      for (const { method, url, scope } of table) {
        assert.notEqual(scope, undefined, `${method} ${url} declares no scope (add config: access(...) to the route)`);
        assert.equal(scope, EXPECTED[`${method === 'HEAD' ? 'GET' : method} ${url}`], `${method} ${url}`);
      }
      assert.deepEqual(Object.keys(declared).sort(), Object.keys(EXPECTED).sort(), 'the table lists exactly the registered routes');
    } finally {
      await h.close();
    }
  });

  test('with tokens in the store: no token 401, a token without the scope 403, the scope (or admin) neither', async () => {
    const h = await openHttpHarness(sqliteFile);
    try {
      const tokens = await issueAll(h.kiln.store);
      await h.app.ready();
      for (const { method, url } of routeAccessTable(h.app)) {
        const name = `${method} ${url}`;
        const scope = EXPECTED[`${method === 'HEAD' ? 'GET' : method} ${url}`];
        assert.ok(scope, name);
        const target = concreteUrl(url);
        const bare = await inject(h.app, method, target);
        if (scope === 'public') {
          assert.ok(![401, 403].includes(bare.statusCode), `${name} is public, answered ${bare.statusCode}`);
          continue;
        }
        assert.equal(bare.statusCode, 401, `${name} without a token`);
        assert.match(String(bare.headers['www-authenticate']), /^Bearer /, name);
        if (method !== 'HEAD') assert.equal(bare.json<{ code: string }>().code, 'UNAUTHENTICATED', name);

        const lacking = await inject(h.app, method, target, tokens.allBut[scope].headers);
        assert.equal(lacking.statusCode, 403, `${name} with every scope but ${scope}`);
        if (method !== 'HEAD') {
          const body = lacking.json<{ code: string; details: { required: string } }>();
          assert.equal(body.code, 'FORBIDDEN_SCOPE', name);
          assert.equal(body.details.required, scope, name);
        }
        for (const other of SCOPED.filter((s) => s !== scope)) {
          assert.equal((await inject(h.app, method, target, tokens.only[other].headers)).statusCode, 403, `${name} with only ${other}`);
        }
        for (const allowed of [tokens.only[scope], tokens.only[TokenScope.admin]]) {
          const res = await inject(h.app, method, target, allowed.headers);
          assert.ok(![401, 403].includes(res.statusCode), `${name} with ${allowed.token.name}: ${res.statusCode} ${res.body}`);
        }
      }
      // An unknown URL says nothing to a stranger; with any valid token it is a 404.
      assert.equal((await inject(h.app, 'GET', '/v1/nothing-here')).statusCode, 401);
      assert.equal((await inject(h.app, 'GET', '/v1/nothing-here', tokens.only.read.headers)).statusCode, 404);
    } finally {
      await h.close();
    }
  });
});

describe('when tokens are asked for', () => {
  test('loopback with no token at all is open, as before tokens (inject and a real loopback listen)', async () => {
    const h = await openHttpHarness(sqliteFile);
    try {
      assert.equal((await inject(h.app, 'GET', '/v1/runs')).statusCode, 200);
      assert.equal((await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 1 } })).statusCode, 202);
      const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
      assert.equal((await fetch(`${base}/v1/queues`)).status, 200);
      assert.equal((await fetch(`${base}/v1/runs`, { headers: { authorization: 'Bearer whatever' } })).status, 200, 'a header nobody can check changes nothing');
    } finally {
      await h.close();
    }
  });

  test('a non-loopback listen with no token answers 401 everywhere but the public routes, saying how to create a token', async (t) => {
    const address = nonLoopbackIPv4();
    if (address === undefined) {
      t.skip('this machine has no non-loopback IPv4 address to listen on');
      return;
    }
    const h = await openHttpHarness(sqliteFile);
    try {
      const base = await h.app.listen({ host: address, port: 0 });
      t.diagnostic(`listening on ${base}`);
      for (const { method, url } of routeAccessTable(h.app)) {
        const res = await fetch(`${base}${concreteUrl(url)}`, { method });
        const scope = EXPECTED[`${method === 'HEAD' ? 'GET' : method} ${url}`];
        if (scope === 'public') assert.notEqual(res.status, 401, `${method} ${url}`);
        else assert.equal(res.status, 401, `${method} ${url}`);
      }
      const health = await fetch(`${base}/healthz`);
      assert.equal(health.status, 200);
      const refused = await fetch(`${base}/v1/runs`);
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="kiln"');
      const body = (await refused.json()) as { code: string; message: string; details: { reason: string } };
      assert.equal(body.code, 'UNAUTHENTICATED');
      assert.equal(body.details.reason, 'no_tokens');
      assert.match(body.message, /kiln tokens create/);
      // Once a token exists it opens what its scopes allow.
      const reader = await issueToken(h.kiln.store, [TokenScope.read]);
      assert.equal((await fetch(`${base}/v1/runs`, { headers: reader.headers })).status, 200);
      assert.equal((await fetch(`${base}/v1/runs`, { method: 'POST', headers: { ...reader.headers, 'content-type': 'application/json' }, body: '{}' })).status, 403);
    } finally {
      await h.close();
    }
  });

  test('the first token closes a loopback server at once for new requests after the existence check expires', async () => {
    let clock = 0;
    const h = await openHttpHarness(sqliteFile, { auth: { monotonicMs: () => clock } });
    try {
      assert.equal((await inject(h.app, 'GET', '/v1/runs')).statusCode, 200);
      const token = await issueToken(h.kiln.store, [TokenScope.read]);
      clock += 2_000;
      assert.equal((await inject(h.app, 'GET', '/v1/runs')).statusCode, 401);
      assert.equal((await inject(h.app, 'GET', '/v1/runs', token.headers)).statusCode, 200);
      // Revoking every token does not open the server again.
      await h.kiln.store.tokens.revoke(token.token.id);
      clock += 2_000;
      const res = await inject(h.app, 'GET', '/v1/runs');
      assert.equal(res.statusCode, 401);
      assert.equal(res.json<{ details: { reason: string } }>().details.reason, 'missing');
    } finally {
      await h.close();
    }
  });
});

describe('token refusals', () => {
  test('malformed, unknown, expired and revoked tokens are 401 with WWW-Authenticate and a reason', async () => {
    const h = await openHttpHarness(sqliteFile);
    try {
      const now = await h.kiln.store.now();
      const good = await issueToken(h.kiln.store, [TokenScope.read]);
      const expired = await issueToken(h.kiln.store, [TokenScope.read], { expiresAt: now - 1 });
      const revoked = await issueToken(h.kiln.store, [TokenScope.read]);
      await h.kiln.store.tokens.revoke(revoked.token.id);
      const cases: [string, Record<string, string>, string][] = [
        ['no header', {}, 'missing'],
        ['basic auth', { authorization: 'Basic dXNlcjpwYXNz' }, 'malformed'],
        ['empty bearer', { authorization: 'Bearer ' }, 'malformed'],
        ['not a kiln token', { authorization: 'Bearer abc' }, 'unknown'],
        ['a well-formed unknown token', { authorization: `Bearer kiln_${'A'.repeat(43)}` }, 'unknown'],
        ['a good token with one character changed', { authorization: `Bearer ${good.secret.slice(0, -1)}${good.secret.endsWith('A') ? 'B' : 'A'}` }, 'unknown'],
        ['an expired token', expired.headers, 'expired'],
        ['a revoked token', revoked.headers, 'revoked'],
      ];
      for (const [name, headers, reason] of cases) {
        const res = await inject(h.app, 'GET', '/v1/runs', headers);
        assert.equal(res.statusCode, 401, name);
        const body = res.json<{ code: string; details: { reason: string } }>();
        assert.equal(body.code, 'UNAUTHENTICATED', name);
        assert.equal(body.details.reason, reason, name);
        assert.match(String(res.headers['www-authenticate']), reason === 'missing' ? /^Bearer realm="kiln"$/ : /error="invalid_token"/, name);
        assert.equal(res.body.includes(good.secret), false);
      }
      assert.equal((await inject(h.app, 'GET', '/v1/runs', good.headers)).statusCode, 200);
      assert.equal((await inject(h.app, 'GET', '/v1/runs', { authorization: `bearer   ${good.secret}` })).statusCode, 200, 'the scheme is case-insensitive');
    } finally {
      await h.close();
    }
  });

  test('an expiring token works until its expiry, then is refused (cached or not)', async () => {
    let now = Date.now();
    const h = await openHttpHarness(sqliteFile, { auth: { nowMs: () => now } });
    try {
      const token = await issueToken(h.kiln.store, [TokenScope.read], { expiresAt: now + 60_000 });
      assert.equal((await inject(h.app, 'GET', '/v1/runs', token.headers)).statusCode, 200);
      now += 60_000;
      const res = await inject(h.app, 'GET', '/v1/runs', token.headers);
      assert.equal(res.statusCode, 401);
      assert.equal(res.json<{ details: { reason: string } }>().details.reason, 'expired');
    } finally {
      await h.close();
    }
  });

  test('/metrics is public unless http.auth.metrics is token, then it needs admin (its series carry tenant labels)', async () => {
    for (const metrics of ['public', 'token'] as const) {
      const h = await openHttpHarness(sqliteFile, { auth: { metrics } });
      try {
        const admin = await issueToken(h.kiln.store, [TokenScope.admin]);
        const reader = await issueToken(h.kiln.store, [TokenScope.read, TokenScope.submit, TokenScope.operate]);
        assert.equal((await inject(h.app, 'GET', '/metrics')).statusCode, metrics === 'public' ? 200 : 401, metrics);
        assert.equal((await inject(h.app, 'GET', '/metrics', reader.headers)).statusCode, metrics === 'public' ? 200 : 403, metrics);
        assert.equal((await inject(h.app, 'GET', '/metrics', admin.headers)).statusCode, 200, metrics);
      } finally {
        await h.close();
      }
    }
  });
});

describe('token checks and the store', () => {
  test('a revoked token stops working within 5 s on a real server (revoked through another store handle)', async () => {
    const h = await openHttpHarness(sqliteFile);
    const other = createSqliteStore({ path: join(h.dir, 'kiln.db') });
    try {
      const token = await issueToken(h.kiln.store, [TokenScope.read]);
      const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
      assert.equal((await fetch(`${base}/v1/runs`, { headers: token.headers })).status, 200, 'works (and is cached) before the revoke');
      await other.tokens.revoke(token.token.id);
      const revokedAt = performance.now();
      let status = 200;
      while (status === 200 && performance.now() - revokedAt < 10_000) {
        status = (await fetch(`${base}/v1/runs`, { headers: token.headers })).status;
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const elapsedMs = performance.now() - revokedAt;
      assert.equal(status, 401);
      assert.ok(elapsedMs < 5_000, `refused ${Math.round(elapsedMs)} ms after the revoke`);
    } finally {
      await other.close();
      await h.close();
    }
  });

  test('a store that does not answer the token checks: a loopback server that never saw a token serves as before; a token check is 503', async () => {
    let hang = true;
    let clock = 0;
    const never = new Promise<never>(() => {});
    const h = await openHttpHarness(
      () => {
        const store = createMemoryStore();
        const tokens: TokensPort = {
          ...store.tokens,
          exist: () => (hang ? never : store.tokens.exist()),
          getByHash: (hash) => (hang ? never : store.tokens.getByHash(hash)),
        };
        return { ...store, tokens };
      },
      { auth: { storeTimeoutMs: 100, monotonicMs: () => clock } },
    );
    try {
      // The route itself needs no store: only the token check could hold it up.
      assert.equal((await inject(h.app, 'GET', '/v1/cache/stats')).statusCode, 200);
      hang = false;
      const token = await issueToken(h.kiln.store, [TokenScope.read]);
      clock += 2_000;
      assert.equal((await inject(h.app, 'GET', '/v1/cache/stats')).statusCode, 401, 'the token is seen once the store answers');
      hang = true;
      const res = await inject(h.app, 'GET', '/v1/cache/stats', token.headers);
      assert.equal(res.statusCode, 503);
      assert.equal(res.json<{ code: string }>().code, 'STORE_UNAVAILABLE');
      assert.equal((await inject(h.app, 'GET', '/v1/cache/stats')).statusCode, 401, 'once a token was seen, a silent store never opens the server');
    } finally {
      await h.close();
    }
  });

  test('the cached QR GET adds no store round trip for its token: one token read per TTL, however many requests', async () => {
    const counts = { getByHash: 0, exist: 0 };
    let clock = 0;
    let h: HttpHarness | undefined;
    try {
      h = await openHttpHarness(
        () => {
          const store = createMemoryStore();
          const tokens: TokensPort = {
            ...store.tokens,
            getByHash: (hash) => ((counts.getByHash += 1), store.tokens.getByHash(hash)),
            exist: () => ((counts.exist += 1), store.tokens.exist()),
          };
          return { ...store, tokens };
        },
        { auth: { monotonicMs: () => clock } },
      );
      h.worker.start();
      const token = await issueToken(h.kiln.store, [TokenScope.read, TokenScope.submit]);
      const made = await h.app.inject({ method: 'POST', url: '/v1/qr', payload: { content: 'tokens', wait: 10_000 }, headers: token.headers });
      assert.equal(made.statusCode, 200, made.body);
      const location = String(made.headers['content-location']);
      assert.equal((await h.app.inject({ method: 'GET', url: location, headers: token.headers })).statusCode, 200);
      const before = { ...counts };
      for (let i = 0; i < 50; i++) assert.equal((await h.app.inject({ method: 'GET', url: location, headers: token.headers })).statusCode, 200);
      assert.deepEqual(counts, before, '50 cached GETs within the TTL: no token read, no existence check');
      clock += 2_000;
      for (let i = 0; i < 10; i++) assert.equal((await h.app.inject({ method: 'GET', url: location, headers: token.headers })).statusCode, 200);
      assert.deepEqual(counts, { getByHash: before.getByHash + 1, exist: before.exist }, 'after the TTL: one read for ten requests');
    } finally {
      await h?.close();
    }
  });
});
