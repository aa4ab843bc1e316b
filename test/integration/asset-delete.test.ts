/**
 * GET /v1/assets/:id/:profile revalidation and DELETE /v1/assets/:id on every store: publications
 * are removed and runs of the asset still in flight are cancelled, so nothing is published again.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { photoJpeg } from '../support/asset-fixtures.ts';
import { httpStoreCases } from './http-stores.ts';
import { openHttpHarness } from './http-harness.ts';

for (const { name, skip, create } of httpStoreCases({ s3Artifacts: true })) {
  describe(`DELETE /v1/assets/:id on the ${name} store`, { skip }, () => {
    test('serves a published profile with a revalidating ETag (304); DELETE removes the publications and cancels the versions still queued; nothing is published afterwards', async () => {
      const h = await openHttpHarness(create);
      try {
        const put = (body: Buffer) => h.app.inject({ method: 'PUT', url: '/v1/assets/gone', payload: body, headers: { 'content-type': 'image/jpeg' } });
        const first = (await put(await photoJpeg(64, 48))).json<{ run_id: string }>();
        h.worker.start();
        await h.waitForStatus(first.run_id, ['succeeded'], 30_000);
        await h.worker.stop(1_000);
        const served = await h.app.inject({ method: 'GET', url: '/v1/assets/gone/thumb' });
        assert.equal(served.statusCode, 200);
        assert.equal(served.headers['content-type'], 'image/png');
        assert.equal(Number(served.headers['content-length']), served.rawPayload.byteLength);
        assert.equal(served.rawPayload.subarray(1, 4).toString(), 'PNG');
        const etag = String(served.headers.etag);
        assert.match(etag, /^"[0-9a-f]{64}"$/);
        assert.equal(served.headers['cache-control'], 'no-cache');
        assert.equal((await h.app.inject({ method: 'GET', url: '/v1/assets/gone/thumb', headers: { 'if-none-match': etag } })).statusCode, 304);
        const second = (await put(await photoJpeg(80, 60))).json<{ run_id: string }>();
        const deleted = await h.app.inject({ method: 'DELETE', url: '/v1/assets/gone' });
        assert.equal(deleted.statusCode, 200);
        assert.equal(deleted.json<{ deleted: number }>().deleted, 3);
        assert.equal((await h.app.inject({ method: 'GET', url: `/v1/runs/${second.run_id}` })).json<{ status: string }>().status, 'cancelled');
        const worker = h.kiln.createWorker({ pollMs: 10 });
        worker.start();
        await worker.runOnce();
        await worker.stop(1_000);
        assert.equal((await h.app.inject({ method: 'GET', url: '/v1/assets/gone/thumb' })).statusCode, 404);
      } finally {
        await h.close();
      }
    });
  });
}
