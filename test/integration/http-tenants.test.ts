/**
 * Tenants on the HTTP API: a walk of EVERY route fastify registered with two tenants, A and B
 * (tokens with read, submit and operate), and an admin token. Tenant A first makes one of each
 * thing (a succeeded run, a parked run, a dead-lettered run and its dead job, a running run, an
 * asset with a published profile, a QR request); then, route by route, B cannot see, list,
 * cancel, resume, replay, download or delete any of them (each route answers the very 404 of a
 * missing thing, a list without them, or, for the shared operator routes, 403 or aggregates that
 * name nothing of A's), while A can and admin can. A route without a case here fails the walk.
 * Runs on every store of `httpStoreCases` (memory and SQLite always).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { TokenScope } from '../../src/core/ports/tokens.ts';
import { NotFoundError } from '../../src/core/errors.ts';
import { routeAccessTable } from '../../src/http/auth.ts';
import { createQrService } from '../../src/pipelines/qr-code/qr-service.ts';
import { solidImage } from '../support/asset-fixtures.ts';
import { issueToken, type IssuedToken } from '../support/api-tokens.ts';
import { openHttpHarness, type HttpHarness } from './http-harness.ts';
import { httpStoreCases, type HttpStoreCase } from './http-stores.ts';

const A = 'tenant-a';
const B = 'tenant-b';
const MEMBER_SCOPES = [TokenScope.read, TokenScope.submit, TokenScope.operate];

type Headers = Record<string, string>;

function call(app: FastifyInstance, method: string, url: string, headers: Headers, payload?: unknown): Promise<LightMyRequestResponse> {
  const json = payload !== undefined && !(payload instanceof Buffer);
  return app.inject({
    method: method as InjectOptions['method'],
    url,
    headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(payload === undefined ? {} : { payload: json ? JSON.stringify(payload) : (payload as Buffer) }),
  });
}

/** What tenant A made, by kind. */
interface World {
  a: IssuedToken;
  b: IssuedToken;
  admin: IssuedToken;
  /** A succeeded demo run with Idempotency-Key `shared-key` and subject `subject-1`. */
  succeeded: string;
  parked: string;
  deadRun: string;
  deadJob: string;
  /** A run sleeping in its first stage (cancellable). */
  running: string;
  /** A's asset `logo`, published (profile `thumb`), and the artifact of that publication. */
  assetRun: string;
  artifact: string;
  /** A's QR request: its content hash and request id (a run id). */
  qrHash: string;
  qrRequest: string;
}

async function waitFor(h: HttpHarness, headers: Headers, runId: string, statuses: readonly string[]): Promise<{ status: string }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await call(h.app, 'GET', `/v1/runs/${runId}`, headers);
    assert.equal(res.statusCode, 200, res.body);
    const run = res.json<{ status: string }>();
    if (statuses.includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status}, expected ${statuses.join('|')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function submitAs(h: HttpHarness, token: IssuedToken, input: unknown, extra: Record<string, unknown> = {}, headers: Headers = {}): Promise<string> {
  const res = await call(h.app, 'POST', '/v1/runs', { ...token.headers, ...headers }, { pipeline: 'demo.sleep', input, ...extra });
  assert.equal(res.statusCode, 202, res.body);
  return res.json<{ id: string }>().id;
}

/** Tenant A's things, each in the state its routes act on. */
async function makeWorld(h: HttpHarness): Promise<World> {
  const a = await issueToken(h.kiln.store, MEMBER_SCOPES, { tenant: A, name: 'a' });
  const b = await issueToken(h.kiln.store, MEMBER_SCOPES, { tenant: B, name: 'b' });
  const admin = await issueToken(h.kiln.store, [TokenScope.admin], { tenant: 'ops', name: 'admin' });
  h.worker.start();
  const succeeded = await submitAs(h, a, { delayMs: 0 }, { subjectId: 'subject-1', subjectVersion: 1 }, { 'idempotency-key': 'shared-key' });
  const parked = await submitAs(h, a, { delayMs: 0, failAt: 'process', failWith: 'intervention' });
  const deadRun = await submitAs(h, a, { delayMs: 0, failAt: 'prepare', failWith: 'retryable' });
  const running = await submitAs(h, a, { delayMs: 600_000 });
  const png = await solidImage('png');
  const put = await call(h.app, 'PUT', '/v1/assets/logo', { ...a.headers, 'content-type': 'image/png' }, png);
  assert.equal(put.statusCode, 202, put.body);
  const assetRun = put.json<{ run_id: string }>().run_id;
  const qr = await call(h.app, 'POST', '/v1/qr', { ...a.headers, 'idempotency-key': 'qr-key' }, { content: 'tenant A secret', wait: 0 });
  assert.ok([200, 202].includes(qr.statusCode), qr.body);
  const qrHash = String(qr.headers['etag'] ?? '').replaceAll('"', '') || qr.json<{ content_hash: string }>().content_hash;

  await waitFor(h, a.headers, succeeded, ['succeeded']);
  await waitFor(h, a.headers, parked, ['parked']);
  await waitFor(h, a.headers, deadRun, ['dead_lettered']);
  await waitFor(h, a.headers, running, ['running']);
  await waitFor(h, a.headers, assetRun, ['succeeded']);
  const qrRuns = (await call(h.app, 'GET', '/v1/runs?pipeline=qr-code', a.headers)).json<{ id: string }[]>();
  assert.equal(qrRuns.length, 1, 'the QR request started one run, stamped with tenant A');
  const qrRequest = qrRuns[0]?.id ?? '';
  await waitFor(h, a.headers, qrRequest, ['succeeded']);
  const deadJobs = (await call(h.app, 'GET', '/v1/dead-letters', a.headers)).json<{ id: string; runId: string }[]>();
  const deadJob = deadJobs.find((j) => j.runId === deadRun)?.id ?? '';
  assert.ok(deadJob, 'A lists its dead letter');
  const publications = (await call(h.app, 'GET', '/v1/publications?subjectId=logo', a.headers)).json<{ profile: string; artifactRef: string }[]>();
  const artifact = publications.find((p) => p.profile === 'thumb')?.artifactRef ?? '';
  assert.ok(artifact, 'A sees the publication of its asset by its own id');
  return { a, b, admin, succeeded, parked, deadRun, deadJob, running, assetRun, artifact, qrHash, qrRequest };
}

/**
 * The 404 a missing thing gets, for comparison: the same route asked (by A, who may) for `missing`,
 * with `missing` then replaced by the real id, so B's answer must be byte for byte the same.
 */
async function assertHiddenLikeMissing(h: HttpHarness, w: World, method: string, url: (id: string) => string, realId: string, missingId: string, payload?: unknown): Promise<void> {
  const asB = await call(h.app, method, url(realId), w.b.headers, payload);
  const missing = await call(h.app, method, url(missingId), w.a.headers, payload);
  assert.equal(missing.statusCode, 404, `${method} ${url(missingId)}: a missing thing is 404 (${missing.body})`);
  assert.equal(asB.statusCode, 404, `${method} ${url(realId)} as B: ${asB.body}`);
  assert.equal(asB.body, missing.body.split(missingId).join(realId), `${method} ${url(realId)}: B's 404 is exactly a missing thing's`);
}

/** The body mentions none of A's ids (nor A's tenant name). */
function assertNamesNothingOfA(res: LightMyRequestResponse, w: World, what: string): void {
  for (const id of [w.succeeded, w.parked, w.deadRun, w.deadJob, w.running, w.assetRun, w.artifact, w.qrHash, w.qrRequest, A]) {
    assert.ok(!res.body.includes(id), `${what} shows ${id} of tenant A to B: ${res.body.slice(0, 300)}`);
  }
}

async function status(h: HttpHarness, w: World, runId: string): Promise<string> {
  return (await call(h.app, 'GET', `/v1/runs/${runId}`, w.admin.headers)).json<{ status: string }>().status;
}

const MISSING_RUN = '01J00000000000000000000000';

/** One case per route (`METHOD url`): what B, A and admin get. */
type RouteCase = (h: HttpHarness, w: World) => Promise<void>;

const CASES: Readonly<Record<string, RouteCase | 'public'>> = {
  // Public routes show no tenant's data (/metrics counts runs by tenant: with tenants, set
  // http.auth.metrics: token, which needs admin; see http-auth.test.ts).
  'GET /healthz': 'public',
  'GET /metrics': 'public',
  'GET /dashboard': 'public',
  'GET /dashboard/': 'public',
  'GET /dashboard/*': 'public',

  'POST /v1/runs': async (h, w) => {
    const mismatch = await call(h.app, 'POST', '/v1/runs', w.b.headers, { pipeline: 'demo.sleep', input: { delayMs: 0 }, tenant: A });
    assert.equal(mismatch.statusCode, 403, mismatch.body);
    assert.equal(mismatch.json<{ code: string }>().code, 'TENANT_MISMATCH');
    // B's Idempotency-Key is B's own: the key A used answers a new run of B, not A's run.
    const own = await call(h.app, 'POST', '/v1/runs', { ...w.b.headers, 'idempotency-key': 'shared-key' }, { pipeline: 'demo.sleep', input: { delayMs: 0 }, subjectId: 'subject-1', subjectVersion: 1 });
    assert.equal(own.statusCode, 202, own.body);
    const run = own.json<{ id: string; tenant: string; subjectId: string; idempotencyKey: string }>();
    assert.notEqual(run.id, w.succeeded);
    assert.deepEqual([run.tenant, run.subjectId, run.idempotencyKey], [B, 'subject-1', 'shared-key'], 'B sees its run as it named it');
    assert.equal(await status(h, w, w.succeeded), 'succeeded', 'B\'s version 1 of its subject-1 did not touch A\'s subject-1');
    // A repeats its key: its own run again. Admin submits for any tenant.
    const again = await call(h.app, 'POST', '/v1/runs', { ...w.a.headers, 'idempotency-key': 'shared-key' }, { pipeline: 'demo.sleep', input: { delayMs: 0 }, subjectId: 'subject-1', subjectVersion: 1 });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json<{ id: string }>().id, w.succeeded);
    const forA = await call(h.app, 'POST', '/v1/runs', w.admin.headers, { pipeline: 'demo.sleep', input: { delayMs: 0 }, tenant: A });
    assert.equal(forA.statusCode, 202, forA.body);
    assert.equal(forA.json<{ tenant: string }>().tenant, A);
  },
  'GET /v1/runs': async (h, w) => {
    for (const url of ['/v1/runs', `/v1/runs?tenant=${A}`, '/v1/runs?subjectId=subject-1', '/v1/runs?pipeline=thumbnails', '/v1/runs?limit=500']) {
      const res = await call(h.app, 'GET', url, w.b.headers);
      assert.equal(res.statusCode, 200, res.body);
      assertNamesNothingOfA(res, w, `GET ${url}`);
      for (const run of res.json<{ tenant: string }[]>()) assert.equal(run.tenant, B, url);
    }
    const mine = (await call(h.app, 'GET', '/v1/runs?limit=500', w.a.headers)).json<{ id: string }[]>().map((r) => r.id);
    for (const id of [w.succeeded, w.parked, w.deadRun, w.running, w.assetRun, w.qrRequest]) assert.ok(mine.includes(id), `A lists ${id}`);
    const bySubject = (await call(h.app, 'GET', '/v1/runs?subjectId=subject-1', w.a.headers)).json<{ id: string; subjectId: string }[]>();
    assert.deepEqual(bySubject.map((r) => [r.id, r.subjectId]), [[w.succeeded, 'subject-1']], 'A finds its runs by the subject id it named');
    const all = (await call(h.app, 'GET', '/v1/runs?limit=500', w.admin.headers)).json<{ tenant: string }[]>();
    assert.ok(all.some((r) => r.tenant === A) && all.some((r) => r.tenant === B), 'admin lists every tenant');
  },
  'GET /v1/runs/:id': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'GET', (id) => `/v1/runs/${id}`, w.succeeded, MISSING_RUN);
    assert.equal((await call(h.app, 'GET', `/v1/runs/${w.succeeded}`, w.a.headers)).json<{ subjectId: string }>().subjectId, 'subject-1');
    assert.equal((await call(h.app, 'GET', `/v1/runs/${w.succeeded}`, w.admin.headers)).json<{ subjectId: string }>().subjectId, `${A}/subject-1`, 'admin sees the stored key');
  },
  'GET /v1/runs/:id/attempts': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'GET', (id) => `/v1/runs/${id}/attempts`, w.deadRun, MISSING_RUN);
    for (const token of [w.a, w.admin]) {
      const res = await call(h.app, 'GET', `/v1/runs/${w.deadRun}/attempts`, token.headers);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.json<unknown[]>().length >= 1);
    }
  },
  'POST /v1/runs/:id/cancel': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'POST', (id) => `/v1/runs/${id}/cancel`, w.running, MISSING_RUN, {});
    assert.equal(await status(h, w, w.running), 'running', 'B\'s cancel changed nothing');
    const res = await call(h.app, 'POST', `/v1/runs/${w.running}/cancel`, w.a.headers, {});
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await status(h, w, w.running), 'cancelled');
    const other = await submitAs(h, w.a, { delayMs: 600_000 });
    assert.equal((await call(h.app, 'POST', `/v1/runs/${other}/cancel`, w.admin.headers, {})).statusCode, 200, 'admin cancels any tenant\'s run');
  },
  'POST /v1/runs/:id/resume': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'POST', (id) => `/v1/runs/${id}/resume`, w.parked, MISSING_RUN);
    assert.equal(await status(h, w, w.parked), 'parked', 'B\'s resume changed nothing');
    const res = await call(h.app, 'POST', `/v1/runs/${w.parked}/resume`, w.a.headers);
    assert.equal(res.statusCode, 200, res.body);
    await waitFor(h, w.a.headers, w.parked, ['parked']);
    assert.equal((await call(h.app, 'POST', `/v1/runs/${w.parked}/resume`, w.admin.headers)).statusCode, 200);
  },
  'GET /v1/jobs': async (h, w) => {
    for (const url of ['/v1/jobs?limit=500', `/v1/jobs?runId=${w.running}`, '/v1/jobs?state=dead', '/v1/jobs?queue=demo.sleep.prepare']) {
      const res = await call(h.app, 'GET', url, w.b.headers);
      assert.equal(res.statusCode, 200, res.body);
      assertNamesNothingOfA(res, w, `GET ${url}`);
    }
    const mine = (await call(h.app, 'GET', '/v1/jobs?state=dead', w.a.headers)).json<{ id: string }[]>().map((j) => j.id);
    assert.ok(mine.includes(w.deadJob));
    assert.ok((await call(h.app, 'GET', '/v1/jobs?state=dead', w.admin.headers)).json<{ id: string }[]>().some((j) => j.id === w.deadJob));
  },
  'GET /v1/jobs/:id': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'GET', (id) => `/v1/jobs/${id}`, w.deadJob, MISSING_RUN);
    for (const token of [w.a, w.admin]) assert.equal((await call(h.app, 'GET', `/v1/jobs/${w.deadJob}`, token.headers)).statusCode, 200);
  },
  'POST /v1/jobs/:id/replay': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'POST', (id) => `/v1/jobs/${id}/replay`, w.deadJob, MISSING_RUN);
    assert.equal(await status(h, w, w.deadRun), 'dead_lettered', 'B\'s replay changed nothing');
    const res = await call(h.app, 'POST', `/v1/jobs/${w.deadJob}/replay`, w.a.headers);
    assert.equal(res.statusCode, 200, res.body);
  },
  'GET /v1/dead-letters': async (h, w) => {
    for (const url of ['/v1/dead-letters', '/v1/dead-letters?groupBy=code', '/v1/dead-letters?code=DEMO_FAILURE']) {
      const res = await call(h.app, 'GET', url, w.b.headers);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), [], `${url}: B has no dead letters`);
    }
    const groups = (await call(h.app, 'GET', '/v1/dead-letters?groupBy=code', w.a.headers)).json<{ code: string; count: number; latestJobId: string }[]>();
    assert.deepEqual(groups.map((g) => [g.code, g.count, g.latestJobId]), [['DEMO_FAILURE', 1, w.deadJob]]);
    assert.ok((await call(h.app, 'GET', '/v1/dead-letters', w.admin.headers)).json<{ id: string }[]>().some((j) => j.id === w.deadJob));
  },

  // Shared infrastructure: aggregate reads any read token sees (no ids, keys or tenants), and
  // actions on every tenant's work that only admin takes.
  'GET /v1/queues': async (h, w) => {
    const res = await call(h.app, 'GET', '/v1/queues', w.b.headers);
    assert.equal(res.statusCode, 200);
    assertNamesNothingOfA(res, w, 'GET /v1/queues');
  },
  'GET /v1/queues/activity': async (h, w) => {
    const res = await call(h.app, 'GET', '/v1/queues/activity', w.b.headers);
    assert.equal(res.statusCode, 200);
    assertNamesNothingOfA(res, w, 'GET /v1/queues/activity');
  },
  'POST /v1/queues/:queue/pause': adminOnly('POST', '/v1/queues/demo.sleep.prepare/pause'),
  'POST /v1/queues/:queue/resume': adminOnly('POST', '/v1/queues/demo.sleep.prepare/resume'),
  'POST /v1/queues/:queue/drain': adminOnly('POST', '/v1/queues/demo.sleep.finish/drain'),
  'GET /v1/verify': adminOnly('GET', '/v1/verify'),
  'GET /v1/cache/entries': adminOnly('GET', '/v1/cache/entries'),
  'GET /v1/cache/stats': async (h, w) => {
    const res = await call(h.app, 'GET', '/v1/cache/stats', w.b.headers);
    assert.equal(res.statusCode, 200);
    assertNamesNothingOfA(res, w, 'GET /v1/cache/stats');
  },

  'GET /v1/publications': async (h, w) => {
    for (const subject of ['logo', `${A}/logo`, w.qrHash]) {
      const res = await call(h.app, 'GET', `/v1/publications?subjectId=${encodeURIComponent(subject)}`, w.b.headers);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), [], `B sees no publication of ${subject}`);
    }
    const admin = (await call(h.app, 'GET', `/v1/publications?subjectId=${encodeURIComponent(`${A}/logo`)}`, w.admin.headers)).json<{ artifactRef: string }[]>();
    assert.ok(admin.some((p) => p.artifactRef === w.artifact), 'admin reads A\'s publications by their stored subject');
  },
  'GET /v1/artifacts/:ref': async (h, w) => {
    const ref = encodeURIComponent(w.artifact);
    for (const query of ['', '?subjectId=logo', `?run=${w.assetRun}`]) {
      await assertHiddenLikeMissing(h, w, 'GET', (r) => `/v1/artifacts/${encodeURIComponent(r)}${query}`, w.artifact, `sha256:${'0'.repeat(64)}`);
    }
    assert.equal((await call(h.app, 'GET', `/v1/artifacts/${ref}`, w.a.headers)).statusCode, 404, 'a tenant reads an artifact through something of its own');
    const published = (await call(h.app, 'GET', '/v1/publications?subjectId=logo', w.a.headers)).json<{ artifactUrl: string }[]>();
    for (const url of [`/v1/artifacts/${ref}?subjectId=logo`, published[0]?.artifactUrl ?? '']) assert.equal((await call(h.app, 'GET', url, w.a.headers)).statusCode, 200, url);
    assert.equal((await call(h.app, 'GET', `/v1/artifacts/${ref}`, w.admin.headers)).statusCode, 200);
  },

  'POST /v1/qr': async (h, w) => {
    // B's Idempotency-Key is its own: A's key with other content is no conflict (it would tell B what A asked).
    const res = await call(h.app, 'POST', '/v1/qr', { ...w.b.headers, 'idempotency-key': 'qr-key' }, { content: 'tenant B', wait: 0 });
    assert.ok([200, 202].includes(res.statusCode), res.body);
    assertNamesNothingOfA(res, w, 'POST /v1/qr');
  },
  'GET /v1/qr': async (h, w) => {
    // The same content as A's: the render is shared (no second run), and the hash is now B's too.
    const res = await call(h.app, 'GET', `/v1/qr?content=${encodeURIComponent('tenant A secret 2')}&wait=0`, w.b.headers);
    assert.ok([200, 202].includes(res.statusCode), res.body);
    assertNamesNothingOfA(res, w, 'GET /v1/qr');
  },
  'GET /v1/qr/:hash': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'GET', (hash) => `/v1/qr/${hash}`, w.qrHash, 'f'.repeat(64));
    for (const token of [w.a, w.admin]) assert.equal((await call(h.app, 'GET', `/v1/qr/${w.qrHash}`, token.headers)).statusCode, 200);
    // Once B asks for the same content itself, the shared render answers B too.
    const asked = await call(h.app, 'GET', `/v1/qr?content=${encodeURIComponent('tenant A secret')}&wait=0`, w.b.headers);
    assert.equal(asked.statusCode, 200, asked.body);
    assert.equal((await call(h.app, 'GET', `/v1/qr/${w.qrHash}`, w.b.headers)).statusCode, 200);
    const runs = (await call(h.app, 'GET', '/v1/runs?pipeline=qr-code&limit=500', w.admin.headers)).json<{ input: unknown }[]>();
    assert.equal(runs.filter((r) => JSON.stringify(r.input).includes('tenant A secret"')).length, 1, 'rendered once for both tenants');
  },
  'GET /v1/requests/:id': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'GET', (id) => `/v1/requests/${id}`, w.qrRequest, MISSING_RUN);
    for (const token of [w.a, w.admin]) assert.equal((await call(h.app, 'GET', `/v1/requests/${w.qrRequest}`, token.headers)).statusCode, 200);
  },

  'GET /v1/assets/:id': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'GET', (id) => `/v1/assets/${id}`, 'logo', 'nothing');
    const mine = await call(h.app, 'GET', '/v1/assets/logo', w.a.headers);
    assert.equal(mine.statusCode, 200, mine.body);
    assert.deepEqual(mine.json<{ versions: { run_id: string }[] }>().versions.map((v) => v.run_id), [w.assetRun]);
    const mismatch = await call(h.app, 'GET', `/v1/assets/logo?tenant=${A}`, w.b.headers);
    assert.equal(mismatch.statusCode, 403);
    assert.equal(mismatch.json<{ code: string }>().code, 'TENANT_MISMATCH');
    assert.equal((await call(h.app, 'GET', `/v1/assets/logo?tenant=${A}`, w.admin.headers)).statusCode, 200, 'admin names the tenant');
    assert.equal((await call(h.app, 'GET', '/v1/assets/logo', w.admin.headers)).statusCode, 404, 'admin\'s own tenant has no logo');
  },
  'GET /v1/assets/:id/:profile': async (h, w) => {
    await assertHiddenLikeMissing(h, w, 'GET', (id) => `/v1/assets/${id}/thumb`, 'logo', 'nothing');
    assert.equal((await call(h.app, 'GET', '/v1/assets/logo/thumb', w.a.headers)).statusCode, 200);
    assert.equal((await call(h.app, 'GET', `/v1/assets/logo/thumb?tenant=${A}`, w.admin.headers)).statusCode, 200);
  },
  'PUT /v1/assets/:id': async (h, w) => {
    const png = await solidImage('png', '#cc3366');
    const mismatch = await call(h.app, 'PUT', `/v1/assets/logo?tenant=${A}`, { ...w.b.headers, 'content-type': 'image/png' }, png);
    assert.equal(mismatch.statusCode, 403, mismatch.body);
    // B's logo is B's own: version 1, and A's logo keeps its one version (nothing superseded).
    const put = await call(h.app, 'PUT', '/v1/assets/logo', { ...w.b.headers, 'content-type': 'image/png' }, png);
    assert.equal(put.statusCode, 202, put.body);
    const started = put.json<{ version: number; run_id: string }>();
    assert.equal(started.version, 1);
    await waitFor(h, w.b.headers, started.run_id, ['succeeded']);
    const a = (await call(h.app, 'GET', '/v1/assets/logo', w.a.headers)).json<{ versions: { run_id: string; status: string }[]; publications: Record<string, { version: number }> }>();
    assert.deepEqual(a.versions.map((v) => [v.run_id, v.status]), [[w.assetRun, 'succeeded']]);
    assert.equal(a.publications['thumb']?.version, 1);
    const aBytes = await call(h.app, 'GET', '/v1/assets/logo/thumb', w.a.headers);
    const bBytes = await call(h.app, 'GET', '/v1/assets/logo/thumb', w.b.headers);
    assert.notEqual(aBytes.headers['etag'], bBytes.headers['etag'], 'two logos, two images');
  },
  'DELETE /v1/assets/:id': async (h, w) => {
    // B's DELETE names B's own logo: A's publications stay.
    const before = (await call(h.app, 'GET', '/v1/assets/logo/thumb', w.a.headers)).headers['etag'];
    const mismatch = await call(h.app, 'DELETE', `/v1/assets/logo?tenant=${A}`, w.b.headers);
    assert.equal(mismatch.statusCode, 403);
    assert.equal((await call(h.app, 'DELETE', '/v1/assets/logo', w.b.headers)).statusCode, 200);
    const after = await call(h.app, 'GET', '/v1/assets/logo/thumb', w.a.headers);
    assert.equal(after.statusCode, 200, 'A\'s logo survived B\'s delete');
    assert.equal(after.headers['etag'], before);
    const byAdmin = await call(h.app, 'DELETE', `/v1/assets/logo?tenant=${A}`, w.admin.headers);
    assert.ok(byAdmin.json<{ deleted: number }>().deleted >= 1, 'admin deletes A\'s logo by naming the tenant');
    assert.equal((await call(h.app, 'GET', '/v1/assets/logo/thumb', w.a.headers)).statusCode, 404);
  },
};

/** A route on every tenant's work: B's (and A's) token is refused with 403, admin's is not. */
function adminOnly(method: string, url: string): RouteCase {
  return async (h, w) => {
    for (const token of [w.b, w.a]) {
      const res = await call(h.app, method, url, token.headers);
      assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`);
      assert.equal(res.json<{ code: string }>().code, 'FORBIDDEN_SCOPE');
    }
    const res = await call(h.app, method, url, w.admin.headers);
    assert.ok(res.statusCode < 300, `${method} ${url} as admin: ${res.statusCode} ${res.body}`);
  };
}

/** Cases in the order they run: reads before the writes that change what they read. */
const ORDER = [
  'GET /v1/dead-letters',
  'GET /v1/jobs',
  'GET /v1/jobs/:id',
  'GET /v1/assets/:id',
  'GET /v1/assets/:id/:profile',
  'GET /v1/artifacts/:ref',
  'GET /v1/publications',
  'GET /v1/requests/:id',
  'GET /v1/qr/:hash',
  'PUT /v1/assets/:id',
  'DELETE /v1/assets/:id',
];

function describeTenants({ name, skip, create }: HttpStoreCase): void {
  describe(`tenants on every route (${name} store)`, { skip }, () => {
    test('a token whose tenant holds "/" (made before the CLI refused one) is refused: 401 UNAUTHENTICATED, reason invalid_tenant', async () => {
      const h = await openHttpHarness(create);
      try {
        const slashed = await issueToken(h.kiln.store, MEMBER_SCOPES, { tenant: `${A}/eu` });
        const res = await call(h.app, 'GET', '/v1/runs', slashed.headers);
        assert.equal(res.statusCode, 401, res.body);
        assert.deepEqual([res.json<{ code: string }>().code, res.json<{ details: { reason: string } }>().details.reason], ['UNAUTHENTICATED', 'invalid_tenant']);
      } finally {
        await h.close();
      }
    });

    test('which tenant asked for a QR hash is kept in the store: a process that never saw the request (a fresh service) answers A and refuses B', async () => {
      const h = await openHttpHarness(create);
      try {
        const a = await issueToken(h.kiln.store, MEMBER_SCOPES, { tenant: A });
        h.worker.start();
        const asked = await call(h.app, 'POST', '/v1/qr', a.headers, { content: 'asked by A', wait: 10_000 });
        assert.equal(asked.statusCode, 200, asked.body);
        const hash = String(asked.headers['etag']).replaceAll('"', '');
        const fresh = createQrService(h.kiln);
        const answer = await fresh.byHash(hash, undefined, { tenant: A, restricted: true });
        assert.equal(answer.kind, 'image');
        await assert.rejects(fresh.byHash(hash, undefined, { tenant: B, restricted: true }), (err: unknown) => err instanceof NotFoundError);
        assert.equal((await fresh.byHash(hash, undefined, { tenant: 'ops', restricted: false })).kind, 'image', 'an unrestricted caller (admin) sees every hash');
      } finally {
        await h.close();
      }
    });

    test('B cannot see, list, cancel, resume, replay, download or delete anything of A; A can, admin can', async (t) => {
      const h = await openHttpHarness(create);
      try {
        await h.app.ready();
        const routes = [...new Set(routeAccessTable(h.app).filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`))];
        assert.deepEqual(routes.slice().sort(), Object.keys(CASES).sort(), 'one case per registered route');
        const w = await makeWorld(h);
        const order = [...ORDER, ...routes.filter((r) => !ORDER.includes(r))].sort((x, y) => Number(x.startsWith('DELETE')) - Number(y.startsWith('DELETE')));
        for (const route of order) {
          const check = CASES[route];
          if (check === undefined || check === 'public') continue;
          await t.test(route, () => check(h, w));
        }
      } finally {
        await h.close();
      }
    });
  });
}

for (const storeCase of httpStoreCases()) describeTenants(storeCase);
