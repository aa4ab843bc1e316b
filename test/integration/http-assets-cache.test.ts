/**
 * Identical work is done once across assets, over the HTTP API on every store: the same image
 * uploaded under two asset ids at once (two runs over one source checksum) is transformed once,
 * the other run getting the single-flight build (a hit, or a wait on the build in progress), and
 * its profiles are rendered once; a third asset id uploaded later is a plain cache hit. Counted by
 * `kiln_cache_builds_total` and `kiln_cache_requests_total` on `/metrics`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_PROFILES } from '../../src/pipelines/thumbnails/media/render-profile.ts';
import { RENDER_CACHE, TRANSFORM_CACHE } from '../../src/pipelines/thumbnails/stages.ts';
import { photoJpeg } from '../support/asset-fixtures.ts';
import { sumMetric } from '../e2e/qr-serve.ts';
import { httpStoreCases } from './http-stores.ts';
import { openHttpHarness, type HttpHarness } from './http-harness.ts';

const SETTLED = ['succeeded', 'failed', 'dead_lettered', 'parked', 'cancelled', 'superseded'];

/** Uploads `bytes` as `assetId` and waits for its run to settle; returns the run. */
async function uploadAndSettle(h: HttpHarness, assetId: string, bytes: Buffer): Promise<{ id: string; status: string; stages: { stage: string; output?: unknown }[] }> {
  const res = await h.app.inject({ method: 'PUT', url: `/v1/assets/${assetId}`, payload: bytes, headers: { 'content-type': 'image/jpeg' } });
  assert.equal(res.statusCode, 202, res.body);
  return h.waitForStatus(res.json<{ run_id: string }>().run_id, SETTLED, 30_000);
}

/** Reads counters of one cache from `/metrics`: builds, and requests by result. */
async function cacheCounts(app: FastifyInstance, cache: string): Promise<{ builds: number; miss: number; hit: number; wait: number }> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const requests = (result: string): number => sumMetric(text, 'kiln_cache_requests_total', { cache, result });
  return { builds: sumMetric(text, 'kiln_cache_builds_total', { cache }), miss: requests('miss'), hit: requests('hit'), wait: requests('wait') };
}

function etagsOf(h: HttpHarness, assetId: string): Promise<string[]> {
  return Promise.all(DEFAULT_PROFILES.map(async ({ name }) => String((await h.app.inject({ method: 'GET', url: `/v1/assets/${assetId}/${name}` })).headers.etag)));
}

for (const c of httpStoreCases({ s3Artifacts: true })) describe(`${c.name}: one source checksum under several asset ids`, { skip: c.skip }, () => {
  test('two runs over the same source transform it once (the other is a hit or a wait) and a later third run is a hit', { timeout: 60_000 }, async (t) => {
    const startedAt = Date.now();
    const h = await openHttpHarness(c.create);
    t.after(() => h.close());
    h.worker.start();
    const photo = await photoJpeg(1600, 1200);

    const twins = await Promise.all(['twin-a', 'twin-b'].map((id) => uploadAndSettle(h, id, photo)));
    for (const run of twins) assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const intermediates = twins.map((run) => (run.stages.find((s) => s.stage === 'transform')?.output as { artifact: string }).artifact);
    assert.equal(intermediates[0], intermediates[1], 'both runs use one normalized intermediate');
    const transform = await cacheCounts(h.app, TRANSFORM_CACHE);
    assert.equal(transform.builds, 1, 'transform built once');
    assert.equal(transform.miss, 1);
    assert.equal(transform.hit + transform.wait, 1, `the other run shared the build (hit ${transform.hit}, wait ${transform.wait})`);
    const render = await cacheCounts(h.app, RENDER_CACHE);
    assert.equal(render.builds, DEFAULT_PROFILES.length, 'each profile rendered once');
    assert.equal(render.hit + render.wait, DEFAULT_PROFILES.length);

    const third = await uploadAndSettle(h, 'third', photo);
    assert.equal(third.status, 'succeeded');
    const after = await cacheCounts(h.app, TRANSFORM_CACHE);
    assert.deepEqual(after, { ...transform, hit: transform.hit + 1 }, 'a later run over the same source is a plain hit');
    assert.equal((await cacheCounts(h.app, RENDER_CACHE)).builds, DEFAULT_PROFILES.length);

    const [a, b, c3] = await Promise.all(['twin-a', 'twin-b', 'third'].map((id) => etagsOf(h, id)));
    assert.deepEqual(b, a, 'the twins publish the same bytes');
    assert.deepEqual(c3, a);
    t.diagnostic(`twins: transform hit ${transform.hit}, wait ${transform.wait}; wall time ${Date.now() - startedAt} ms`);
  });
});
