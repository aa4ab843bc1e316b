/**
 * Defects a new user hit (issue 14, point 7), each through the real HTTP app over a SQLite store
 * and the filesystem artifact store in a temp dir.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { openHttpHarness, type HttpHarness } from './http-harness.ts';

const sqlite = (dir: string) => createSqliteStore({ path: join(dir, 'kiln.db') });

async function temps(h: HttpHarness): Promise<string[]> {
  try {
    return await readdir(join(h.dir, 'artifacts', 'tmp'));
  } catch {
    return [];
  }
}

const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="red"/></svg>');

describe('asset PUT with broken multipart framing', () => {
  let h: HttpHarness;
  before(async () => {
    h = await openHttpHarness(sqlite);
  });
  after(() => h.close());

  function form(bytes: Buffer, partType: string): { payload: Buffer; headers: Record<string, string> } {
    const boundary = 'kiln-test-boundary';
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.svg"\r\nContent-Type: ${partType}\r\n\r\n`),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    return { payload, headers: { 'content-type': `Multipart/Form-Data; boundary=${boundary}` } };
  }

  test('a well-formed multipart upload is still accepted, and an oversized part is still 413', async () => {
    const ok = await h.app.inject({ method: 'PUT', url: '/v1/assets/a0', ...form(SVG, 'image/svg+xml') });
    assert.equal(ok.statusCode, 202, ok.body);
    const huge = await h.app.inject({ method: 'PUT', url: '/v1/assets/a0', ...form(Buffer.alloc(51 * 1024 * 1024, 0x20), 'image/svg+xml') });
    assert.equal(huge.statusCode, 413, huge.body);
    assert.deepEqual(await temps(h), []);
  });

  test('a multipart content type without a boundary is 400 INVALID_MULTIPART', async () => {
    const res = await h.app.inject({ method: 'PUT', url: '/v1/assets/a1', payload: 'hello', headers: { 'content-type': 'multipart/form-data' } });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json<{ code: string }>().code, 'INVALID_MULTIPART');
    assert.deepEqual(await temps(h), []);
  });

  test('a multipart body that ends early is 400 INVALID_MULTIPART and leaves no temp file', async () => {
    const boundary = 'XyZ123';
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.svg"\r\nContent-Type: image/svg+xml\r\n\r\n`),
      SVG,
      // no closing boundary: the body ends inside the file part
    ]);
    const res = await h.app.inject({ method: 'PUT', url: '/v1/assets/a2', payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json<{ code: string }>().code, 'INVALID_MULTIPART');
    assert.deepEqual(await temps(h), []);
  });
});

describe('content types with parameters', () => {
  let h: HttpHarness;
  before(async () => {
    h = await openHttpHarness(sqlite);
  });
  after(() => h.close());

  test('media types are compared without parameters and case-insensitively', async () => {
    for (const type of ['image/svg+xml; charset=utf-8', 'Image/SVG+XML;charset="UTF-8"', 'application/octet-stream; foo=bar']) {
      const res = await h.app.inject({ method: 'PUT', url: '/v1/assets/p1', payload: SVG, headers: { 'content-type': type } });
      assert.equal(res.statusCode, 202, `${type}: ${res.body}`);
    }
    const json = await h.app.inject({
      method: 'POST',
      url: '/v1/runs',
      payload: JSON.stringify({ pipeline: 'demo.sleep', input: { delayMs: 1 } }),
      headers: { 'content-type': 'Application/JSON; charset=UTF-8' },
    });
    assert.equal(json.statusCode, 202, json.body);
    const text = await h.app.inject({ method: 'PUT', url: '/v1/assets/p1', payload: SVG, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    assert.equal(text.statusCode, 415, text.body);
  });

  test('an accepted SVG declared with parameters is rendered, not refused as a type mismatch', async () => {
    h.worker.start();
    const res = await h.app.inject({ method: 'PUT', url: '/v1/assets/p2', payload: SVG, headers: { 'content-type': 'image/svg+xml; charset=utf-8' } });
    assert.equal(res.statusCode, 202, res.body);
    const run = await h.waitForStatus(res.json<{ run_id: string }>().run_id, ['succeeded', 'failed', 'dead_lettered', 'parked'], 30_000);
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  });
});

describe('operator actions on queues', () => {
  let h: HttpHarness;
  before(async () => {
    h = await openHttpHarness(sqlite);
  });
  after(() => h.close());

  test('pause, resume and drain of a queue no registered pipeline has answer 404 UNKNOWN_QUEUE and create nothing', async () => {
    for (const action of ['pause', 'resume', 'drain']) {
      const res = await h.app.inject({ method: 'POST', url: `/v1/queues/made-up-${action}/${action}` });
      assert.equal(res.statusCode, 404, `${action}: ${res.body}`);
      assert.equal(res.json<{ code: string }>().code, 'UNKNOWN_QUEUE');
    }
    const queues = (await h.app.inject({ method: 'GET', url: '/v1/queues' })).json<{ queue: string }[]>().map((q) => q.queue);
    assert.deepEqual(queues.filter((q) => q.startsWith('made-up')), []);
    const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.ok(!metrics.includes('made-up'), 'no metric series for an unknown queue');
  });

  test('a real queue is still paused, resumed and drained', async () => {
    for (const action of ['pause', 'resume', 'drain']) {
      const res = await h.app.inject({ method: 'POST', url: `/v1/queues/demo.sleep.prepare/${action}` });
      assert.equal(res.statusCode, 200, `${action}: ${res.body}`);
    }
  });
});
