/**
 * The error envelope: every failure answers fastify's `{statusCode, code, error, message}` with a
 * kiln code, names the offending field, and never leaks a stack trace or an internal message.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { StoreUnavailableError } from '../../src/core/errors.ts';
import { clientErrorEnvelope } from '../../src/http/error-envelope.ts';
import type { Logger } from '../../src/core/logger.ts';
import { openHttpHarness, postJson, type HarnessOptions, type HttpHarness } from './http-harness.ts';

async function withHarness(fn: (h: HttpHarness) => Promise<void>, options: HarnessOptions = {}): Promise<void> {
  const h = await openHttpHarness((dir) => createSqliteStore({ path: join(dir, 'kiln.db') }), options);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

function assertEnvelope(body: Record<string, unknown>, statusCode: number, code: string): void {
  assert.equal(body.statusCode, statusCode);
  assert.equal(body.code, code);
  assert.equal(typeof body.error, 'string');
  assert.equal(typeof body.message, 'string');
  assert.equal('stack' in body, false);
}

test('malformed JSON is 400 INVALID_JSON, and so is an empty JSON body', () =>
  withHarness(async (h) => {
    const bad = await h.app.inject({ method: 'POST', url: '/v1/runs', payload: '{"pipeline": ', headers: { 'content-type': 'application/json' } });
    assert.equal(bad.statusCode, 400);
    assertEnvelope(bad.json(), 400, 'INVALID_JSON');
    const empty = await h.app.inject({ method: 'POST', url: '/v1/runs', payload: '', headers: { 'content-type': 'application/json' } });
    assertEnvelope(empty.json(), 400, 'INVALID_JSON');
  }));

test('schema violations are 400 VALIDATION_FAILED naming each field', () =>
  withHarness(async (h) => {
    const missing = await postJson(h.app, '/v1/runs', { input: {} });
    assertEnvelope(missing.json(), 400, 'VALIDATION_FAILED');
    assert.match(missing.json().message, /body\.pipeline is required/);
    assert.deepEqual(missing.json().details.issues, [{ field: 'body.pipeline', message: 'is required' }]);

    const wrongType = await postJson(h.app, '/v1/runs', { pipeline: 7 });
    assert.match(wrongType.json().message, /body\.pipeline expected string/);

    const extra = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', pipline: 'typo' });
    assertEnvelope(extra.json(), 400, 'VALIDATION_FAILED');
    assert.match(extra.json().message, /body\.pipline is not allowed/);

    const limit = await h.app.inject({ method: 'GET', url: '/v1/runs?limit=0' });
    assert.match(limit.json().message, /querystring\.limit expected integer to be greater or equal to 1/);
  }));

test("input the pipeline rejects (an explicit null, a wrong type) is 400 and queues nothing", () =>
  withHarness(async (h) => {
    for (const input of [null, { delayMs: 'x' }, { delayMs: 1, extra: true }]) {
      const res = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input });
      assertEnvelope(res.json(), 400, 'VALIDATION_FAILED');
    }
    assert.deepEqual((await h.app.inject({ method: 'GET', url: '/v1/runs' })).json(), []);
  }));

test('a body over the limit is 413 PAYLOAD_TOO_LARGE', () =>
  withHarness(
    async (h) => {
      const res = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { pad: 'x'.repeat(2_000) } });
      assert.equal(res.statusCode, 413);
      assertEnvelope(res.json(), 413, 'PAYLOAD_TOO_LARGE');
    },
    { bodyLimitBytes: 1_024 },
  ));

test('a body that is not JSON is 415 UNSUPPORTED_MEDIA_TYPE', () =>
  withHarness(async (h) => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/runs', payload: 'pipeline=demo.sleep', headers: { 'content-type': type } });
      assert.equal(res.statusCode, 415, type);
      assertEnvelope(res.json(), 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
  }));

test('an unknown route is 404 NOT_FOUND in the same envelope', () =>
  withHarness(async (h) => {
    const res = await h.app.inject({ method: 'GET', url: '/v2/nothing?x=1' });
    assert.equal(res.statusCode, 404);
    assertEnvelope(res.json(), 404, 'NOT_FOUND');
    assert.equal(res.json().message, 'route GET /v2/nothing not found');
  }));

// Found by the HTTP fuzzer (test/support/http-fuzz/): fastify's router answered these itself,
// with its own codes (FST_ERR_BAD_URL, FST_ERR_MAX_PARAM_LENGTH) and a 414 for a 101-character id.
test("errors of fastify's router answer the envelope: a malformed percent-encoding or an over-long path parameter is 400 VALIDATION_FAILED", () =>
  withHarness(async (h) => {
    for (const url of ['/v1/runs/%E0%A4%A', '/v1/runs/%ZZ/attempts', `/v1/runs/${'a'.repeat(1_500)}/attempts`, `/v1/jobs/${'j'.repeat(2_000)}`]) {
      const res = await h.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 400, url);
      assertEnvelope(res.json(), 400, 'VALIDATION_FAILED');
    }
    // Ids up to the schema's 200 characters reach the route (fastify's default limit was 100).
    const long = await h.app.inject({ method: 'GET', url: `/v1/runs/${'a'.repeat(150)}` });
    assertEnvelope(long.json(), 404, 'NOT_FOUND');
    const tooLong = await h.app.inject({ method: 'GET', url: `/v1/runs/${'a'.repeat(201)}` });
    assertEnvelope(tooLong.json(), 400, 'VALIDATION_FAILED');
    assert.match(tooLong.json().message, /params\.id/);
  }));

/** Writes `raw` to the server at `origin` and reads everything it answers until it closes. */
function rawExchange(origin: string, raw: string): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.end(raw));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

// Found by the fuzzer's real-HTTP pass: Node's HTTP layer refused these before fastify routed
// them, and fastify answered without a code ({"error":"Request Header Fields Too Large",...}).
test('a request the HTTP parser refuses answers the envelope: a 20 KB URL is 431 HEADERS_TOO_LARGE, a malformed request line 400 VALIDATION_FAILED', () =>
  withHarness(async (h) => {
    const origin = await h.app.listen({ host: '127.0.0.1', port: 0 });
    const long = await fetch(`${origin}/v1/qr?content=${'x'.repeat(20_000)}`);
    assert.equal(long.status, 431);
    assertEnvelope((await long.json()) as Record<string, unknown>, 431, 'HEADERS_TOO_LARGE');
    const garbage = await rawExchange(origin, 'NOT HTTP AT ALL\r\n\r\n');
    assert.match(garbage, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assertEnvelope(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>, 400, 'VALIDATION_FAILED');
    // A client too slow to send its request (after REQUEST_RECEIVE_TIMEOUT_MS, 5 minutes: not waited for here).
    assertEnvelope({ ...clientErrorEnvelope('ERR_HTTP_REQUEST_TIMEOUT') }, 408, 'REQUEST_TIMEOUT');
  }));

/** A core `Logger` (not pino) that keeps error lines, to see what the API logs. */
function recordingLogger(errors: Record<string, unknown>[]): Logger {
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (obj: Record<string, unknown> | string) => {
      if (typeof obj === 'object') errors.push(obj);
    },
    child: () => logger,
  };
  return logger;
}

test('an unexpected error is 500 INTERNAL without its message or stack, and is logged', async () => {
  const logged: Record<string, unknown>[] = [];
  await withHarness(
    async (h) => {
      h.app.get('/test/boom', async () => {
        throw new Error('secret database password in message');
      });
      const res = await h.app.inject({ method: 'GET', url: '/test/boom' });
      assert.equal(res.statusCode, 500);
      assertEnvelope(res.json(), 500, 'INTERNAL');
      assert.equal(res.json().message, 'internal server error');
      assert.doesNotMatch(res.body, /secret|at .*\.ts/);
    },
    { logger: recordingLogger(logged) },
  );
  assert.ok(
    logged.some((line) => line.err instanceof Error && line.err.message.includes('secret')),
    'the real error goes to the log',
  );
});

test('STORE_UNAVAILABLE is 503 with Retry-After', () =>
  withHarness(async (h) => {
    h.app.get('/test/unavailable', async () => {
      throw new StoreUnavailableError('store busy', { details: { retryAfterMs: 2_500 } });
    });
    const res = await h.app.inject({ method: 'GET', url: '/test/unavailable' });
    assert.equal(res.statusCode, 503);
    assertEnvelope(res.json(), 503, 'STORE_UNAVAILABLE');
    assert.equal(res.headers['retry-after'], '3');
  }));

test('a request not answered within the deadline is 503 STORE_UNAVAILABLE with Retry-After, not a hang', () =>
  withHarness(
    async (h) => {
      // Stands for a store call that never returns (a dead pool, a black-holed network).
      h.app.get('/test/hang', () => new Promise(() => {}));
      const res = await h.app.inject({ method: 'GET', url: '/test/hang' });
      assert.equal(res.statusCode, 503);
      assertEnvelope(res.json(), 503, 'STORE_UNAVAILABLE');
      assert.match(res.json().message, /no answer within 100 ms/);
      assert.equal(res.headers['retry-after'], '1');
      // Routes that answer in time are untouched.
      assert.equal((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    },
    { requestTimeoutMs: 100 },
  ));

test('/healthz is 503 STORE_UNAVAILABLE when the store does not answer', () =>
  withHarness(async (h) => {
    await h.kiln.store.close();
    const res = await h.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(res.statusCode, 503);
    assertEnvelope(res.json(), 503, 'STORE_UNAVAILABLE');
    assert.equal(res.headers['retry-after'], '1');
  }));
