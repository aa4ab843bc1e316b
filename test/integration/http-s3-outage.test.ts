/**
 * S3 down under the HTTP API: the test's s3rver (a child process) is stopped while an asset is
 * published, then started again on the same port and files. While it is down, reading the asset,
 * uploading one and /healthz answer 503 ARTIFACTS_UNAVAILABLE with Retry-After (nothing hangs, no
 * 500); once it is back, the same requests succeed with the same bytes and ETag.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { photoJpeg } from '../support/asset-fixtures.ts';
import { s3Artifacts } from '../support/artifact-cases.ts';
import { sharedS3 } from '../support/s3-server.ts';
import { openHttpHarness } from './http-harness.ts';

function assertUnavailable(res: LightMyRequestResponse, what: string): void {
  assert.equal(res.statusCode, 503, `${what}: ${res.body}`);
  assert.equal(res.json<{ code: string }>().code, 'ARTIFACTS_UNAVAILABLE', what);
  assert.ok(Number(res.headers['retry-after']) >= 1, `${what}: Retry-After`);
}

describe('the HTTP API while S3 is down, and after', () => {
  test('asset GET, asset PUT and /healthz are 503 ARTIFACTS_UNAVAILABLE with Retry-After while S3 is down, and work again once it is back', async (t) => {
    const s3 = await sharedS3();
    if (!s3.owned) return t.skip('KILN_S3_URL names a server this test cannot stop');
    const h = await openHttpHarness(() => ({ store: createMemoryStore(), destroy: async () => {}, artifacts: s3Artifacts }));
    t.after(() => h.close());
    const put = (id: string, body: Buffer) => h.app.inject({ method: 'PUT', url: `/v1/assets/${id}`, payload: body, headers: { 'content-type': 'image/jpeg' } });
    const first = await put('before', await photoJpeg(64, 48));
    assert.equal(first.statusCode, 202, first.body);
    h.worker.start();
    await h.waitForStatus(first.json<{ run_id: string }>().run_id, ['succeeded'], 30_000);
    await h.worker.stop(1_000);
    const served = await h.app.inject({ method: 'GET', url: '/v1/assets/before/thumb' });
    assert.equal(served.statusCode, 200, served.body);

    await s3.stop();
    try {
      assertUnavailable(await h.app.inject({ method: 'GET', url: '/v1/assets/before/thumb' }), 'GET asset');
      assertUnavailable(await put('during', await photoJpeg(80, 60)), 'PUT asset');
      assertUnavailable(await h.app.inject({ method: 'GET', url: '/healthz' }), '/healthz');
      // A revalidation needs no bytes: it is answered from the publication, S3 down or not.
      const revalidated = await h.app.inject({ method: 'GET', url: '/v1/assets/before/thumb', headers: { 'if-none-match': String(served.headers.etag) } });
      assert.equal(revalidated.statusCode, 304);
    } finally {
      await s3.start();
    }

    const again = await h.app.inject({ method: 'GET', url: '/v1/assets/before/thumb' });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers.etag, served.headers.etag);
    assert.deepEqual(again.rawPayload, served.rawPayload);
    const after = await put('after', await photoJpeg(80, 60));
    assert.equal(after.statusCode, 202, after.body);
  });
});
