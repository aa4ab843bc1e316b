/**
 * The request deadline bounds a hung store, not the client: a QR `wait` the client asked for is
 * waited out (the deadline is that wait plus the normal one), an upload body that trickles in for
 * longer than the deadline is accepted, and an upload the client aborts leaves no temp file.
 * Everything goes through a real listening server and real files.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { openHttpHarness, type HttpHarness } from './http-harness.ts';

const DEADLINE_MS = 1_000;

async function openListening(): Promise<{ h: HttpHarness; port: number }> {
  const h = await openHttpHarness((dir) => createSqliteStore({ path: join(dir, 'kiln.db') }), { requestTimeoutMs: DEADLINE_MS });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return { h, port: (h.app.server.address() as AddressInfo).port };
}

/** The artifact store's temp files (none when the directory was never made). */
async function temps(h: HttpHarness): Promise<string[]> {
  return readdir(join(h.dir, 'artifacts', 'tmp')).catch(() => []);
}

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  status: number;
  body: string;
}

/** A request whose body is written by `feed`; resolves with the answer (or rejects if the socket dies). */
function send(port: number, method: string, path: string, headers: Record<string, string>, feed: (req: ClientRequest) => Promise<void>): { answer: Promise<Answer>; req: ClientRequest } {
  const req = httpRequest({ host: '127.0.0.1', port, method, path, headers });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  void feed(req).catch(() => {});
  return { answer, req };
}

/** Writes `chunks` pieces of `chunkBytes` bytes, `gapMs` apart. */
async function trickle(req: ClientRequest, chunks: number, chunkBytes: number, gapMs: number, first: Buffer = Buffer.alloc(0)): Promise<void> {
  if (first.byteLength > 0) req.write(first);
  for (let i = 0; i < chunks; i++) {
    req.write(Buffer.alloc(chunkBytes, i));
    await sleep(gapMs);
  }
}

test('a QR wait longer than the request deadline is waited out, not answered 503', { timeout: 30_000 }, async () => {
  const { h, port } = await openListening();
  try {
    // No worker runs: the render never comes, so the request waits its whole `wait`.
    const started = Date.now();
    const post = send(port, 'POST', '/v1/qr', { 'content-type': 'application/json' }, async (req) => {
      req.end(JSON.stringify({ content: 'deadline', wait: 2_500 }));
    });
    const get = send(port, 'GET', '/v1/qr?content=deadline-get&wait=2500', {}, async (req) => {
      req.end();
    });
    const [posted, got] = await Promise.all([post.answer, get.answer]);
    const elapsed = Date.now() - started;
    assert.equal(posted.status, 202, posted.body);
    assert.equal(got.status, 202, got.body);
    assert.ok(elapsed >= 2_400, `answered after ${elapsed} ms, before the wait ended`);
  } finally {
    await h.close();
  }
});

test('a raw upload whose body trickles in for longer than the deadline is accepted and leaves no temp file', { timeout: 30_000 }, async () => {
  const { h, port } = await openListening();
  try {
    const started = Date.now();
    const put = send(port, 'PUT', '/v1/assets/slow', { 'content-type': 'image/png' }, async (req) => {
      await trickle(req, 10, 1_024, 200);
      req.end();
    });
    const answer = await put.answer;
    assert.equal(answer.status, 202, answer.body);
    assert.ok(Date.now() - started >= 2 * DEADLINE_MS - 200, 'the body took longer than the deadline');
    assert.equal((JSON.parse(answer.body) as { version: number }).version, 1);
    assert.deepEqual(await temps(h), []);
  } finally {
    await h.close();
  }
});

test('a multipart upload whose body trickles in for longer than the deadline is accepted and leaves no temp file', { timeout: 30_000 }, async () => {
  const { h, port } = await openListening();
  try {
    const boundary = 'kilnboundary';
    const head = Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.png"\r\ncontent-type: image/png\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const put = send(port, 'PUT', '/v1/assets/slow-form', { 'content-type': `multipart/form-data; boundary=${boundary}` }, async (req) => {
      await trickle(req, 10, 1_024, 200, head);
      req.end(tail);
    });
    const answer = await put.answer;
    assert.equal(answer.status, 202, answer.body);
    assert.deepEqual(await temps(h), []);
  } finally {
    await h.close();
  }
});

for (const kind of ['raw', 'multipart'] as const) {
  test(`a ${kind} upload the client aborts after the deadline leaves no temp file`, { timeout: 30_000 }, async () => {
    const { h, port } = await openListening();
    try {
      const boundary = 'kilnboundary';
      const headers = { 'content-type': kind === 'raw' ? 'image/png' : `multipart/form-data; boundary=${boundary}` };
      const head = kind === 'raw' ? Buffer.alloc(0) : Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.png"\r\ncontent-type: image/png\r\n\r\n`);
      const put = send(port, 'PUT', `/v1/assets/aborted-${kind}`, headers, async (req) => {
        await trickle(req, 8, 1_024, 200, head);
        req.destroy();
      });
      await put.answer.catch(() => undefined);
      // The partial file existed while the body came in; it is gone once the client is.
      assert.ok(await eventually(async () => (await temps(h)).length === 0, 2_000), `temp files left: ${(await temps(h)).join(', ')}`);
      // Nothing was stored as a version.
      const described = await h.app.inject({ method: 'GET', url: `/v1/assets/aborted-${kind}` });
      assert.equal(described.statusCode, 404, described.body);
    } finally {
      await h.close();
    }
  });
}
