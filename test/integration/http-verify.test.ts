/**
 * `GET /v1/verify` over a real SQLite store and real artifact files: 200 with `ok: true` after a
 * real run; 200 with `ok: false` and the violation, ids and all, once an artifact is gone; the
 * query's checks, graces and listing limit; a bad query is 400; the report's shape is the
 * schema's (the response is serialized through it, so a field it lacks would vanish).
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import type { VerifyReportView } from '../../src/http/views.ts';
import { QR_PROFILE } from '../../src/pipelines/qr-code/pipeline.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { openHttpHarness } from './http-harness.ts';
import { writeTemp } from './verify-scenario.ts';

test('GET /v1/verify answers the audit: healthy, then the violations with their ids', async (t) => {
  const h = await openHttpHarness((dir) => createSqliteStore({ path: join(dir, 'kiln.db') }));
  t.after(() => h.close());
  h.worker.start();
  const { run } = await h.kiln.submit('qr-code', { content: 'verify over http' });
  await h.waitForStatus(run.id, ['succeeded']);
  await h.worker.stop();
  const verify = async (query = '') => {
    const res = await h.app.inject({ method: 'GET', url: `/v1/verify${query}` });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<VerifyReportView>();
  };

  const healthy = await verify();
  assert.equal(healthy.ok, true);
  assert.equal(healthy.complete, true);
  assert.deepEqual(healthy.violations, []);
  assert.match(healthy.startedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(
    healthy.checks.map((c) => [c.check, c.scanned, c.complete]),
    [
      ['publications', 1, true],
      ['cache', 1, true],
      ['leases', 0, true],
      ['runs', 1, true],
      ['ledger', 1, true],
      ['temps', 0, true],
    ],
  );

  const published = (await h.kiln.getRun(run.id)).stages.find((s) => s.stage === 'publish')?.output as { hash: string };
  const publication = await h.kiln.getPublication(published.hash, QR_PROFILE);
  assert.ok(publication);
  await rm(createFsArtifactStore({ root: join(h.dir, 'artifacts') }).pathOf(publication.artifactRef));
  const tempPath = await writeTemp(join(h.dir, 'artifacts'), 'old.tmp', Date.now() - 10 * 60_000);

  const broken = await verify();
  assert.equal(broken.ok, false);
  assert.equal(broken.violationCount, 2, 'the publication and the cache entry of the deleted artifact; the temp is within the default grace');
  const missing = broken.violations.find((v) => v.kind === 'PUBLICATION_ARTIFACT_MISSING');
  assert.deepEqual(missing && { check: missing.check, ids: missing.ids }, {
    check: 'publications',
    ids: { subjectId: publication.subjectId, profile: QR_PROFILE, artifactRef: publication.artifactRef },
  });
  assert.equal(typeof missing?.details['reason'], 'string');
  assert.match(missing?.message ?? '', /does not exist/);

  const temps = await verify('?checks=temps,leases&tempGraceMs=60000&leaseGraceMs=0');
  assert.deepEqual(
    temps.checks.map((c) => c.check),
    ['leases', 'temps'],
  );
  assert.deepEqual(
    temps.violations.map((v) => [v.kind, v.ids.tempPath]),
    [['TEMP_FILE_ORPHANED', tempPath]],
  );
  const capped = await verify('?maxViolations=1');
  assert.equal(capped.violationCount, 2);
  assert.equal(capped.violations.length, 1);

  for (const query of ['?checks=runs,bogus', '?leaseGraceMs=-1', '?maxViolations=20000', '?extra=1']) {
    const res = await h.app.inject({ method: 'GET', url: `/v1/verify${query}` });
    assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
    assert.equal(res.json<{ code: string }>().code, 'VALIDATION_FAILED');
  }
});
