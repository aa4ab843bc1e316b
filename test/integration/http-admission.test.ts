/**
 * Admission control over HTTP, on every store: past a tenant's maxInFlightRuns or submitRate, or
 * a queue's maxBacklog, POST /v1/runs, POST /v1/qr and PUT /v1/assets/:id answer 429 with
 * `Retry-After` and the limit's code, and queue nothing (the runs and jobs listed after are the
 * ones admitted). 50 concurrent submissions against a limit of 10 admit exactly 10. A resubmitted
 * Idempotency-Key answers its run. The worker is never started: runs stay queued.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { AdmissionLimits } from '../../src/engine/admission.ts';
import { pngWithAlpha } from '../support/asset-fixtures.ts';
import { openHttpHarness, postJson, type HttpHarness } from './http-harness.ts';
import { httpStoreCases, type HttpStoreCase } from './http-stores.ts';

function submitRun(h: HttpHarness, tenant: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 0 }, tenant }, headers);
}

function assertRefused(res: LightMyRequestResponse, code: string): { retryAfterS: number } {
  assert.equal(res.statusCode, 429, res.body);
  assert.equal(res.json<{ code: string }>().code, code);
  const retryAfterS = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfterS) && retryAfterS >= 1, `Retry-After ${String(res.headers['retry-after'])}`);
  return { retryAfterS };
}

async function listed(h: HttpHarness, url: string): Promise<number> {
  const res = await h.app.inject({ method: 'GET', url });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<unknown[]>().length;
}

async function withAdmission(c: HttpStoreCase, admission: AdmissionLimits, fn: (h: HttpHarness) => Promise<void>): Promise<void> {
  const h = await openHttpHarness(c.create, { admission });
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

for (const c of httpStoreCases()) describe(`admission over HTTP on the ${c.name} store`, { skip: c.skip }, () => {
  test('past maxInFlightRuns POST /v1/runs answers 429 TENANT_IN_FLIGHT_LIMIT with Retry-After and queues nothing; a resubmitted key answers its run', () =>
    withAdmission(c, { tenantDefaults: { maxInFlightRuns: 2 } }, async (h) => {
      const first = await submitRun(h, 'acme', { 'idempotency-key': 'order-1' });
      assert.equal(first.statusCode, 202, first.body);
      assert.equal((await submitRun(h, 'acme')).statusCode, 202);
      const refused = await submitRun(h, 'acme');
      assertRefused(refused, 'TENANT_IN_FLIGHT_LIMIT');
      assert.deepEqual(refused.json<{ details: unknown }>().details, { index: 0, tenant: 'acme', limit: 2, retryAfterMs: 1_000 });
      assert.equal(refused.headers['retry-after'], '1');
      const again = await submitRun(h, 'acme', { 'idempotency-key': 'order-1' });
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json<{ id: string }>().id, first.json<{ id: string }>().id);
      assert.equal(await listed(h, '/v1/runs?tenant=acme'), 2);
      assert.equal(await listed(h, '/v1/jobs'), 2);
      assert.equal((await submitRun(h, 'globex')).statusCode, 202, 'another tenant has its own count');
    }));

  test('50 concurrent submissions of a tenant with maxInFlightRuns 10 admit exactly 10', () =>
    withAdmission(c, { tenants: { acme: { maxInFlightRuns: 10 } } }, async (h) => {
      const answers = await Promise.all(Array.from({ length: 50 }, () => submitRun(h, 'acme')));
      const statuses = answers.map((a) => a.statusCode);
      assert.equal(statuses.filter((s) => s === 202).length, 10, JSON.stringify(statuses));
      for (const refused of answers.filter((a) => a.statusCode !== 202)) assertRefused(refused, 'TENANT_IN_FLIGHT_LIMIT');
      assert.equal(await listed(h, '/v1/runs?tenant=acme&limit=100'), 10);
      assert.equal(await listed(h, '/v1/jobs?limit=100'), 10);
    }));

  test('past submitRate POST /v1/runs answers 429 TENANT_RATE_LIMITED with the time until a token as Retry-After', () =>
    withAdmission(c, { tenantDefaults: { submitRate: 0.01, submitBurst: 2 } }, async (h) => {
      assert.equal((await submitRun(h, 'acme', { 'idempotency-key': 'r1' })).statusCode, 202);
      assert.equal((await submitRun(h, 'acme')).statusCode, 202);
      const { retryAfterS } = assertRefused(await submitRun(h, 'acme'), 'TENANT_RATE_LIMITED');
      // One token at 0.01/s takes up to 100 s.
      assert.ok(retryAfterS <= 100, String(retryAfterS));
      assert.equal((await submitRun(h, 'acme', { 'idempotency-key': 'r1' })).statusCode, 200, 'a resubmitted key is answered, not rate limited');
      assert.equal(await listed(h, '/v1/runs?tenant=acme'), 2);
      assert.equal(await listed(h, '/v1/jobs'), 2);
    }));

  test('past maxBacklog of qr-code.render POST /v1/qr answers 429 QUEUE_BACKLOG_FULL and queues nothing', () =>
    withAdmission(c, { queues: { 'qr-code.render': { maxBacklog: 1 } } }, async (h) => {
      assert.equal((await postJson(h.app, '/v1/qr', { content: 'first', wait: 0 })).statusCode, 202);
      assertRefused(await postJson(h.app, '/v1/qr', { content: 'second', wait: 0 }), 'QUEUE_BACKLOG_FULL');
      assert.equal(await listed(h, '/v1/jobs?queue=qr-code.render'), 1);
      assert.equal(await listed(h, '/v1/runs'), 1);
    }));

  test('past maxInFlightRuns PUT /v1/assets/:id answers 429 TENANT_IN_FLIGHT_LIMIT and queues nothing', () =>
    withAdmission(c, { tenantDefaults: { maxInFlightRuns: 1 } }, async (h) => {
      const png = await pngWithAlpha();
      const put = (id: string) => h.app.inject({ method: 'PUT', url: `/v1/assets/${id}`, payload: png, headers: { 'content-type': 'image/png' } });
      assert.equal((await put('logo')).statusCode, 202);
      assertRefused(await put('banner'), 'TENANT_IN_FLIGHT_LIMIT');
      assert.equal(await listed(h, '/v1/runs'), 1);
      assert.equal(await listed(h, '/v1/jobs'), 1);
    }));
});
