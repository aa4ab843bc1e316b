/**
 * The request rules every route shares: one integer parser for query strings, one Idempotency-Key
 * rule, one JSON body error path (docs/errors.md).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { openHttpHarness, type HttpHarness } from './http-harness.ts';

async function withHarness(fn: (h: HttpHarness) => Promise<void>): Promise<void> {
  const h = await openHttpHarness(() => createMemoryStore());
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

test('query-string integers must be plain decimal integers: 2.5, 1e2, 0x10 and " 5" are 400 naming the parameter', () =>
  withHarness(async (h) => {
    for (const bad of ['2.5', '1e2', '0x10', '%205', '5abc', '', '05', '99999999999999999999']) {
      const res = await h.app.inject({ method: 'GET', url: `/v1/runs?limit=${bad}` });
      assert.equal(res.statusCode, 400, `limit=${bad}`);
      const body = res.json();
      assert.equal(body.code, 'VALIDATION_FAILED', `limit=${bad}`);
      assert.match(body.message, /querystring\.limit/, `limit=${bad}`);
    }
    const ok = await h.app.inject({ method: 'GET', url: '/v1/runs?limit=2' });
    assert.equal(ok.statusCode, 200);
    // The QR routes read their query integers with the same parser.
    for (const bad of ['2.5', '1e2', '0512']) {
      assert.equal((await h.app.inject({ method: 'GET', url: `/v1/qr?content=x&size=${bad}` })).statusCode, 400, `size=${bad}`);
      assert.equal((await h.app.inject({ method: 'GET', url: `/v1/qr?content=x&wait=${bad}` })).statusCode, 400, `wait=${bad}`);
    }
    const bucketsBad = await h.app.inject({ method: 'GET', url: '/v1/queues/activity?buckets=1.5' });
    assert.equal(bucketsBad.statusCode, 400);
    assert.match(bucketsBad.json().message, /querystring\.buckets/);
  }));

test('integers must be safe integers: a subjectVersion above 2^53 is 400, not rounded', () =>
  withHarness(async (h) => {
    const payload = '{"pipeline":"demo.sleep","subjectId":"s","subjectVersion":9007199254740993}';
    const res = await h.app.inject({ method: 'POST', url: '/v1/runs', payload, headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'VALIDATION_FAILED');
    assert.match(res.json().message, /body\.subjectVersion/);
    const safe = await h.app.inject({ method: 'POST', url: '/v1/runs', payload: { pipeline: 'demo.sleep', subjectId: 's', subjectVersion: Number.MAX_SAFE_INTEGER } });
    assert.equal(safe.statusCode, 202);
  }));

test('one Idempotency-Key rule: /v1/runs and /v1/qr accept and refuse the same keys, with the same code and message', () =>
  withHarness(async (h) => {
    const refused = ['', 'x'.repeat(256), 'tab\there', 'caf\u00e9'];
    for (const key of refused) {
      const runs = await h.app.inject({ method: 'POST', url: '/v1/runs', payload: { pipeline: 'demo.sleep' }, headers: { 'idempotency-key': key } });
      const qr = await h.app.inject({ method: 'POST', url: '/v1/qr?wait=0', payload: { content: 'hello' }, headers: { 'idempotency-key': key } });
      assert.equal(runs.statusCode, 400, `runs ${JSON.stringify(key)}`);
      assert.equal(qr.statusCode, 400, `qr ${JSON.stringify(key)}`);
      assert.equal(runs.json().code, 'VALIDATION_FAILED');
      assert.equal(qr.json().code, runs.json().code);
      assert.equal(qr.json().message, runs.json().message);
      assert.match(runs.json().message, /idempotency-key/i);
    }
    for (const key of ['k', 'order 42/retry:1', '~'.repeat(255)]) {
      const runs = await h.app.inject({ method: 'POST', url: '/v1/runs', payload: { pipeline: 'demo.sleep' }, headers: { 'idempotency-key': key } });
      const qr = await h.app.inject({ method: 'POST', url: '/v1/qr?wait=0', payload: { content: 'hello' }, headers: { 'idempotency-key': key } });
      assert.equal(runs.statusCode, 202, `runs ${key}`);
      assert.ok(qr.statusCode === 200 || qr.statusCode === 202, `qr ${key}: ${qr.statusCode}`);
    }
  }));

test('one JSON body path: a forbidden key (__proto__, constructor.prototype) is 400 JSON_FORBIDDEN_KEY naming it, not "not valid JSON"', () =>
  withHarness(async (h) => {
    const cases = [
      { payload: '{"__proto__":{}}', path: '__proto__' },
      { payload: '{"pipeline":"demo.sleep","input":{"a":[{"constructor":{"prototype":{"x":1}}}]}}', path: 'input.a.0.constructor' },
    ];
    for (const url of ['/v1/runs', '/v1/qr']) {
      for (const { payload, path } of cases) {
        const res = await h.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
        assert.equal(res.statusCode, 400, `${url} ${payload}`);
        const body = res.json();
        assert.equal(body.code, 'JSON_FORBIDDEN_KEY', `${url} ${payload}`);
        assert.doesNotMatch(body.message, /not valid JSON/);
        assert.equal(body.details.path, path);
      }
      const broken = await h.app.inject({ method: 'POST', url, payload: '{"x":', headers: { 'content-type': 'application/json; charset=utf-8' } });
      assert.equal(broken.statusCode, 400);
      assert.equal(broken.json().code, 'INVALID_JSON');
    }
    const bom = await h.app.inject({ method: 'POST', url: '/v1/runs', payload: '\uFEFF{"pipeline":"demo.sleep"}', headers: { 'content-type': 'application/json' } });
    assert.equal(bom.statusCode, 202, bom.body);
    // "constructor" as plain data passes the parser (demo.sleep's own input check then refuses the field).
    const fine = await h.app.inject({ method: 'POST', url: '/v1/runs', payload: '{"pipeline":"demo.sleep","input":{"constructor":"x"}}', headers: { 'content-type': 'application/json' } });
    assert.equal(fine.json().code, 'VALIDATION_FAILED');
    assert.match(fine.json().message, /demo\.sleep input/);
  }));

test('deeply nested JSON is answered quickly by the same path (no stack overflow, no quadratic walk)', () =>
  withHarness(async (h) => {
    const depth = 30_000;
    const payload = `{"pipeline":"demo.sleep","input":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const started = Date.now();
    const res = await h.app.inject({ method: 'POST', url: '/v1/runs', payload, headers: { 'content-type': 'application/json' } });
    assert.ok(res.statusCode < 500, `${res.statusCode} ${res.body.slice(0, 200)}`);
    assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
  }));
