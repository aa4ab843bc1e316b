/**
 * A PostgreSQL or Redis store that is not there: every API route answers 503 STORE_UNAVAILABLE
 * with Retry-After, within a bounded time and never hanging — when connections are refused, when
 * a server accepts connections but never answers, and when a real server stops and comes back.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createRedisStore } from '../../src/stores/redis/index.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { createMetrics } from '../../src/observe/metrics.ts';
import { builtinPipelines, builtinRoutes } from '../../src/pipelines/index.ts';
import { outageServers, type OutageServer } from '../support/outage-servers.ts';
import { stopRedisAfterAll } from '../support/redis-stores.ts';
import { postgresHttpStore, redisHttpStore } from './http-stores.ts';
import { openHttpHarness, type HttpHarness, type StoreFactory } from './http-harness.ts';

/**
 * Every route that reads or writes the store. `/metrics` is not among them: a scrape still
 * serves the process metrics when queue stats cannot be read (it counts the failure instead).
 */
const ROUTES: readonly { method: 'GET' | 'POST'; url: string; body?: unknown }[] = [
  { method: 'GET', url: '/healthz' },
  { method: 'POST', url: '/v1/runs', body: { pipeline: 'demo.sleep', input: { delayMs: 0 } } },
  { method: 'GET', url: '/v1/runs' },
  { method: 'GET', url: '/v1/runs/run_missing' },
  { method: 'POST', url: '/v1/runs/run_missing/cancel', body: {} },
  { method: 'POST', url: '/v1/runs/run_missing/resume' },
  { method: 'GET', url: '/v1/jobs' },
  { method: 'GET', url: '/v1/jobs/job_missing' },
  { method: 'POST', url: '/v1/jobs/job_missing/replay' },
  { method: 'GET', url: '/v1/queues' },
  { method: 'POST', url: '/v1/queues/demo.sleep.prepare/pause' },
  { method: 'POST', url: '/v1/queues/demo.sleep.prepare/resume' },
  { method: 'POST', url: '/v1/queues/demo.sleep.prepare/drain' },
  { method: 'GET', url: '/v1/verify' },
];

/** Sends every route at once; resolves with `[route, status, code, retry-after]` per route. */
async function hitEveryRoute(app: FastifyInstance): Promise<[string, number, unknown, unknown][]> {
  return Promise.all(
    ROUTES.map(async ({ method, url, body }) => {
      const res = await app.inject({
        method,
        url,
        ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
      const code = res.headers['content-type']?.toString().startsWith('application/json') ? (res.json() as { code?: unknown }).code : undefined;
      return [`${method} ${url}`, res.statusCode, code, res.headers['retry-after']];
    }),
  );
}

function assertAllUnavailable(results: readonly [string, number, unknown, unknown][]): void {
  for (const [route, status, code, retryAfter] of results) {
    assert.deepEqual([route, status, code], [route, 503, 'STORE_UNAVAILABLE']);
    assert.match(String(retryAfter), /^\d+$/, `${route} sends Retry-After`);
  }
}

/** The API over `store` without migrating it (the store is not reachable anyway). */
async function openApp(store: Store, requestTimeoutMs: number): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-outage-'));
  const metrics = createMetrics();
  const kiln = createKiln({ store, artifacts: createFsArtifactStore({ root: join(dir, 'artifacts') }), pipelines: builtinPipelines });
  metrics.setQueueStats(() => kiln.queues());
  const app = buildApp({ kiln, metrics, requestTimeoutMs, routes: builtinRoutes });
  return {
    app,
    async close() {
      await app.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A TCP server on 127.0.0.1 that accepts connections and never sends a byte (a black-holed store). */
async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: taken from the OS, then released. */
async function closedPort(): Promise<number> {
  const silent = await startSilentServer();
  await silent.close();
  return silent.port;
}

/** A store kind, the store it opens on a server at 127.0.0.1:`port`, and its real server. */
interface OutageCase {
  /** A store whose server would listen on `port` (nothing, or something silent, does). */
  at(port: number): Store;
  server: OutageServer;
  /** A store on the real server, for the stop-and-come-back test. */
  create: StoreFactory;
}

const servers = outageServers();
const CASES: OutageCase[] = [
  {
    at: (port) => createPostgresStore({ connectionString: `postgresql://kiln:pw@127.0.0.1:${port}/kiln`, schema: 'kiln' }),
    server: servers.postgres,
    create: postgresHttpStore,
  },
  { at: (port) => createRedisStore({ url: `redis://127.0.0.1:${port}` }), server: servers.redis, create: redisHttpStore },
];
if (servers.redis.skip === undefined) stopRedisAfterAll();

for (const { at, server } of CASES) describe(`the API when ${server.name} is unreachable`, () => {
  test('every route answers 503 STORE_UNAVAILABLE with Retry-After when connections are refused', { timeout: 30_000 }, async () => {
    const store = at(await closedPort());
    const { app, close } = await openApp(store, 10_000);
    try {
      assertAllUnavailable(await hitEveryRoute(app));
      const metrics = await app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(metrics.statusCode, 200);
      assert.match(metrics.body, /^kiln_queue_stats_errors_total [1-9]/m);
    } finally {
      await close();
      await store.close();
    }
  });

  test('every route answers 503 within the request deadline when the server accepts connections but never answers', { timeout: 30_000 }, async () => {
    const silent = await startSilentServer();
    const store = at(silent.port);
    const { app, close } = await openApp(store, 300);
    try {
      const [results, metrics] = await Promise.all([hitEveryRoute(app), app.inject({ method: 'GET', url: '/metrics' })]);
      assertAllUnavailable(results);
      // Whether the scrape gives up on queue stats or hits the deadline first, it answers.
      assert.ok([200, 503].includes(metrics.statusCode), `/metrics answered ${metrics.statusCode}`);
    } finally {
      await close();
      // Dropping the silent connections lets pending connects and commands fail, so close() returns.
      await silent.close();
      await store.close();
    }
  });
});

describe('the request deadline on a store that hangs', () => {
  test('a QR wait extends the deadline by that wait only, and an upload whose body is in still gets 503 within the deadline', { timeout: 30_000 }, async () => {
    const silent = await startSilentServer();
    const store = createPostgresStore({ connectionString: `postgresql://kiln:pw@127.0.0.1:${silent.port}/kiln`, schema: 'kiln' });
    const { app, close } = await openApp(store, 300);
    try {
      const timed = async (run: () => Promise<{ statusCode: number; headers: Record<string, unknown>; json(): unknown }>) => {
        const started = Date.now();
        const res = await run();
        return { ms: Date.now() - started, status: res.statusCode, code: (res.json() as { code?: unknown }).code, retryAfter: res.headers['retry-after'] };
      };
      const [qr, upload] = await Promise.all([
        timed(() => app.inject({ method: 'POST', url: '/v1/qr', payload: { content: 'hung', wait: 700 } })),
        timed(() => app.inject({ method: 'PUT', url: '/v1/assets/hung', payload: Buffer.alloc(2_048, 7), headers: { 'content-type': 'image/png' } })),
      ]);
      for (const answer of [qr, upload]) {
        assert.deepEqual([answer.status, answer.code], [503, 'STORE_UNAVAILABLE']);
        assert.match(String(answer.retryAfter), /^\d+$/);
      }
      assert.ok(qr.ms >= 900 && qr.ms < 5_000, `the QR request answered after ${qr.ms} ms (wait 700 + deadline 300)`);
      assert.ok(upload.ms >= 250 && upload.ms < 5_000, `the upload answered after ${upload.ms} ms (deadline 300)`);
    } finally {
      await close();
      await silent.close();
      await store.close();
    }
  });
});

for (const { server, create } of CASES) describe(`the API when a real ${server.name} stops and comes back`, { skip: server.skip }, () => {
  test('routes answer 503 while the server is down and 200 again once it is back', { timeout: 60_000 }, async (t) => {
    if (!(await server.owned())) {
      // KILN_PG_URL / KILN_REDIS_URL name a server this process cannot stop; the first tests of this file still ran.
      t.skip('a server of KILN_PG_URL / KILN_REDIS_URL: cannot stop it from here');
      return;
    }
    const h: HttpHarness = await openHttpHarness(create, { requestTimeoutMs: 5_000 });
    let down = false;
    t.after(async () => {
      if (down) await server.start();
      await h.close();
    });
    assert.equal((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);

    await server.stop();
    down = true;
    assertAllUnavailable(await hitEveryRoute(h.app));

    await server.start();
    down = false;
    // The pool (the Redis client) replaces broken connections on demand; the first requests may still see them fail.
    const deadline = Date.now() + 20_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      status = (await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 200, `/healthz recovers once ${server.name} is back`);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/runs' })).statusCode, 200);
  });
});
