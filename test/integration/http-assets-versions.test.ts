/**
 * Racing versions of one asset, over the HTTP API in process on every store (memory, SQLite,
 * PostgreSQL): see test/e2e/asset-version-race.ts for the race and what is asserted; the same body
 * runs against real server processes in test/e2e/asset-versions.test.ts.
 */
import { describe, test } from 'node:test';
import { raceVersions, type RaceDriver } from '../e2e/asset-version-race.ts';
import { httpStoreCases } from './http-stores.ts';
import { openHttpHarness, type HttpHarness } from './http-harness.ts';

const SETTLED = ['succeeded', 'failed', 'dead_lettered', 'parked', 'cancelled', 'superseded'];

function injectDriver(h: HttpHarness): RaceDriver {
  return {
    async upload(assetId, png) {
      const res = await h.app.inject({ method: 'PUT', url: `/v1/assets/${assetId}`, payload: png, headers: { 'content-type': 'image/png' } });
      if (res.statusCode !== 202) throw new Error(`PUT ${assetId} answered ${res.statusCode}: ${res.body}`);
      const { version, run_id: runId } = res.json<{ version: number; run_id: string }>();
      return { version, runId };
    },
    async read(assetId, profile) {
      const res = await h.app.inject({ method: 'GET', url: `/v1/assets/${assetId}/${profile}` });
      return { status: res.statusCode, version: Number(res.headers['x-asset-version']), etag: String(res.headers.etag), bytes: res.rawPayload };
    },
    async settle(runId) {
      const run = await h.waitForStatus(runId, SETTLED, 30_000);
      const render = run.stages.find((s) => s.stage === 'render') as { output?: { profiles?: Record<string, { artifact: string }> } } | undefined;
      const renders = Object.fromEntries(Object.entries(render?.output?.profiles ?? {}).map(([name, p]) => [name, p.artifact]));
      return { status: run.status, error: run.error, renders };
    },
  };
}

for (const c of httpStoreCases({ s3Artifacts: true })) describe(`${c.name}: racing versions of one asset`, { skip: c.skip }, () => {
  test('only the newest version is published at the end, and no reader ever sees an older version after a newer one', { timeout: 60_000 }, async (t) => {
    const startedAt = Date.now();
    const h = await openHttpHarness(c.create);
    t.after(() => h.close());
    h.worker.start();
    const summary = await raceVersions(injectDriver(h), 'race');
    t.diagnostic(`${summary}; wall time ${Date.now() - startedAt} ms`);
  });
});
