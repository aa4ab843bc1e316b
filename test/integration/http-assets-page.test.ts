/**
 * `GET /v1/assets/:id` lists one page of versions and says so: `limit` (default 50) newest first,
 * `next_before` naming the next (older) page, null on the last one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { openHttpHarness } from './http-harness.ts';

interface AssetJson {
  versions: { version: number; run_id: string }[];
  next_before: string | null;
}

test('asset versions are paged: limit, before and next_before, null on the last page', async () => {
  const h = await openHttpHarness(() => createMemoryStore());
  try {
    // No worker: the versions stay queued, which is all the listing needs.
    for (let i = 0; i < 3; i++) {
      const res = await h.app.inject({ method: 'PUT', url: '/v1/assets/paged', payload: Buffer.from(`not yet inspected ${i}`), headers: { 'content-type': 'image/png' } });
      assert.equal(res.statusCode, 202, res.body);
    }
    const all = (await h.app.inject({ method: 'GET', url: '/v1/assets/paged' })).json<AssetJson>();
    assert.deepEqual(all.versions.map((v) => v.version), [3, 2, 1]);
    assert.equal(all.next_before, null);

    const first = await h.app.inject({ method: 'GET', url: '/v1/assets/paged?limit=2' });
    assert.equal(first.statusCode, 200);
    const page1 = first.json<AssetJson>();
    assert.deepEqual(page1.versions.map((v) => v.version), [3, 2]);
    assert.equal(page1.next_before, page1.versions[1]?.run_id);
    const page2 = (await h.app.inject({ method: 'GET', url: `/v1/assets/paged?limit=2&before=${page1.next_before}` })).json<AssetJson>();
    assert.deepEqual(page2.versions.map((v) => v.version), [1]);
    assert.equal(page2.next_before, null);

    const bad = await h.app.inject({ method: 'GET', url: '/v1/assets/paged?limit=2.5' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'VALIDATION_FAILED');
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/assets/paged?limit=501' })).statusCode, 400);
  } finally {
    await h.close();
  }
});
