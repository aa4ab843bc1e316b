/**
 * The QR API end to end over every store, driven with `app.inject()`: renders decoded back by a
 * real decoder, content-hash caching and ETags, the 202 path, request status, Idempotency-Key,
 * and bad input answered 4xx without queuing anything.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { QR_CACHE, RENDER_TTL_MS } from '../../src/pipelines/qr-code/pipeline.ts';
import { decodeQr } from '../support/qr-decode.ts';
import { httpStoreCases, type HttpStoreCase } from './http-stores.ts';
import { openHttpHarness, postJson, type StoreFactory, type HttpHarness } from './http-harness.ts';

async function withHarness(createStore: StoreFactory, fn: (h: HttpHarness) => Promise<void>): Promise<void> {
  const h = await openHttpHarness(createStore);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

function bytesOf(res: LightMyRequestResponse): Uint8Array {
  return new Uint8Array(res.rawPayload);
}

interface Pending {
  request_id: string;
  content_hash: string;
  status: string;
  status_url: string;
}

/** Stage executions of qr-code.render that succeeded, from the app's own /metrics. */
async function renderExecutions(h: HttpHarness): Promise<number> {
  const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith('kiln_stage_executions_total{') && l.includes('pipeline="qr-code"') && l.includes('stage="render"') && l.includes('outcome="succeeded"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

async function jobCount(h: HttpHarness): Promise<number> {
  const res = await h.app.inject({ method: 'GET', url: '/v1/jobs?limit=500' });
  return res.json<unknown[]>().length;
}

function describeQrHttp({ name, skip, create }: HttpStoreCase): void {
  describe(`QR API on the ${name} store`, { skip }, () => {
    test('POST /v1/qr answers with a PNG that decodes to the content, and GET by hash serves the same bytes with an ETag', () =>
      withHarness(create, async (h) => {
        h.worker.start();
        const content = 'https://example.com/a?b=1&c=ü';
        const res = await postJson(h.app, '/v1/qr', { content, size: 256 });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['content-type'], 'image/png');
        const etag = String(res.headers.etag);
        assert.match(etag, /^"[0-9a-f]{64}"$/);
        assert.deepEqual(await decodeQr(bytesOf(res), 'image/png'), [content]);
        const hash = etag.slice(1, -1);
        const byHash = await h.app.inject({ method: 'GET', url: `/v1/qr/${hash}` });
        assert.equal(byHash.statusCode, 200);
        assert.equal(byHash.headers['cache-control'], 'public, max-age=31536000, immutable');
        assert.deepEqual(bytesOf(byHash), bytesOf(res));
        const notModified = await h.app.inject({ method: 'GET', url: `/v1/qr/${hash}`, headers: { 'if-none-match': etag } });
        assert.equal(notModified.statusCode, 304);
      }));

    test('the render cache entry of a hash expires exactly its TTL after it was built, without jitter', () =>
      withHarness(create, async (h) => {
        h.worker.start();
        for (const content of ['ttl one', 'ttl two', 'ttl three']) {
          assert.equal((await postJson(h.app, '/v1/qr', { content })).statusCode, 200);
        }
        const entries = await h.kiln.listCacheEntries({ cache: QR_CACHE, status: 'ready', limit: 10 });
        assert.equal(entries.length, 3);
        for (const entry of entries) assert.equal(Number(entry.expiresAt) - entry.updatedAt, RENDER_TTL_MS, entry.key);
      }));

    test('an SVG request renders an SVG that decodes to the content', () =>
      withHarness(create, async (h) => {
        h.worker.start();
        const res = await postJson(h.app, '/v1/qr', { content: '東京 😀', format: 'SVG' });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['content-type'], 'image/svg+xml');
        assert.deepEqual(await decodeQr(bytesOf(res), 'image/svg+xml'), ['東京 😀']);
      }));

    test('GET /v1/qr with query parameters serves the same image as the equivalent POST', () =>
      withHarness(create, async (h) => {
        h.worker.start();
        const posted = await postJson(h.app, '/v1/qr', { content: 'same', ecc: 'H', margin: 2 });
        const got = await h.app.inject({ method: 'GET', url: '/v1/qr?content=same&ecc=h&margin=2' });
        assert.equal(got.statusCode, 200, got.body);
        assert.equal(got.headers.etag, posted.headers.etag);
        assert.deepEqual(bytesOf(got), bytesOf(posted));
      }));

    test('equivalent requests (key order, defaults spelled out, case) render once and share one hash', () =>
      withHarness(create, async (h) => {
        h.worker.start();
        const a = await postJson(h.app, '/v1/qr', { content: 'eq', format: 'png' });
        const b = await postJson(h.app, '/v1/qr', { ecc: 'm', margin: 4, size: 512, fg: '#000', bg: '#FFFFFF', format: 'PNG', content: 'eq' });
        assert.equal(a.statusCode, 200);
        assert.equal(b.headers.etag, a.headers.etag);
        assert.deepEqual(bytesOf(b), bytesOf(a));
        assert.equal(await renderExecutions(h), 1);
      }));

    test('with no worker running, wait=0 answers 202 with a request id whose status URL reports the run', () =>
      withHarness(create, async (h) => {
        const res = await postJson(h.app, '/v1/qr', { content: 'later', wait: 0 });
        assert.equal(res.statusCode, 202, res.body);
        const pending = res.json<Pending>();
        assert.match(pending.content_hash, /^[0-9a-f]{64}$/);
        const building = await h.app.inject({ method: 'GET', url: `/v1/qr/${pending.content_hash}` });
        assert.equal(building.statusCode, 202);
        const status = await h.app.inject({ method: 'GET', url: pending.status_url });
        assert.equal(status.statusCode, 200);
        assert.equal(status.json<Pending>().request_id, pending.request_id);
        h.worker.start();
        await h.waitForStatus(pending.request_id, ['succeeded']);
        const done = await h.app.inject({ method: 'GET', url: `/v1/qr/${pending.content_hash}` });
        assert.equal(done.statusCode, 200);
        assert.deepEqual(await decodeQr(bytesOf(done), 'image/png'), ['later']);
      }));

    test('an unknown hash is 404 and a malformed one 400', () =>
      withHarness(create, async (h) => {
        assert.equal((await h.app.inject({ method: 'GET', url: `/v1/qr/${'a'.repeat(64)}` })).statusCode, 404);
        const bad = await h.app.inject({ method: 'GET', url: '/v1/qr/not-a-hash' });
        assert.equal(bad.statusCode, 400);
        assert.equal(bad.json<{ code: string }>().code, 'VALIDATION_FAILED');
        assert.equal((await h.app.inject({ method: 'GET', url: '/v1/requests/nope' })).statusCode, 404);
      }));

    test('Idempotency-Key: same key and body -> the same request; same key, other body -> 422 IDEMPOTENCY_KEY_REUSED', () =>
      withHarness(create, async (h) => {
        const first = await postJson(h.app, '/v1/qr', { content: 'k1', wait: 0 }, { 'idempotency-key': 'key-1' });
        const again = await postJson(h.app, '/v1/qr', { content: 'k1', wait: 0 }, { 'idempotency-key': 'key-1' });
        assert.equal(first.statusCode, 202);
        assert.equal(again.json<Pending>().request_id, first.json<Pending>().request_id);
        const other = await postJson(h.app, '/v1/qr', { content: 'k2', wait: 0 }, { 'idempotency-key': 'key-1' });
        assert.equal(other.statusCode, 422);
        assert.equal(other.json<{ code: string }>().code, 'IDEMPOTENCY_KEY_REUSED');
        assert.equal(await jobCount(h), 1);
      }));

    test('malformed requests get 4xx with a stable code and queue nothing', () =>
      withHarness(create, async (h) => {
        const cases: { body: string; contentType?: string; status: number; code: string }[] = [
          { body: '{"content": "x"', status: 400, code: 'INVALID_JSON' },
          { body: JSON.stringify({ content: 5 }), status: 400, code: 'VALIDATION_FAILED' },
          { body: JSON.stringify({ content: 'x', colour: 'red' }), status: 400, code: 'VALIDATION_FAILED' },
          { body: JSON.stringify({ content: 'x', fg: '#12' }), status: 400, code: 'VALIDATION_FAILED' },
          { body: JSON.stringify({ content: 'x', size: 10_000 }), status: 400, code: 'VALIDATION_FAILED' },
          { body: JSON.stringify({ content: 'x', fg: '#fff', bg: '#ffffff' }), status: 422, code: 'QR_COLORS_UNREADABLE' },
          { body: JSON.stringify({ content: 'x'.repeat(2332) }), status: 422, code: 'QR_CONTENT_TOO_LONG' },
          { body: JSON.stringify({ content: 'x'.repeat(70_000) }), status: 413, code: 'PAYLOAD_TOO_LARGE' },
          { body: JSON.stringify({ content: 'x', wait: -1 }), status: 400, code: 'VALIDATION_FAILED' },
          { body: '[1,2]', status: 400, code: 'VALIDATION_FAILED' },
          { body: 'content=x', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
        ];
        for (const c of cases) {
          const res = await h.app.inject({ method: 'POST', url: '/v1/qr', payload: c.body, headers: { 'content-type': c.contentType ?? 'application/json' } });
          assert.equal(res.statusCode, c.status, `${c.body.slice(0, 60)}: ${res.body}`);
          assert.equal(res.json<{ code: string }>().code, c.code, c.body.slice(0, 60));
        }
        assert.equal(await jobCount(h), 0);
      }));
  });
}

for (const storeCase of httpStoreCases({ s3Artifacts: true })) describeQrHttp(storeCase);
