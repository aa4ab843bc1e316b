/**
 * Racing versions across real processes: two `kiln serve` processes (each with its embedded
 * worker) share one store and one artifacts directory; the versions of each asset are uploaded to
 * either server at random, and the reader alternates between them. The race and its assertions
 * are test/e2e/asset-version-race.ts (also run in process on every store). SQLite (one file) and
 * PostgreSQL (one schema).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fsArtifacts, s3Artifacts, type ArtifactCase } from '../support/artifact-cases.ts';
import { getProfile, getRunJson, putAsset, SETTLED_RUN_STATUSES, stageOutput, UploadMode } from './asset-http.ts';
import { raceVersions, type RaceDriver } from './asset-version-race.ts';
import { cleanEnv, killIfRunning, waitUntil } from './kiln-process.ts';
import { startServe, type ServeProcess } from './qr-serve.ts';
import { qrE2eStoreCases, type QrE2eStoreCase } from './qr-stores.ts';

function serversDriver(bases: readonly string[]): RaceDriver {
  let reads = 0;
  return {
    async upload(assetId, png) {
      const base = bases[Math.floor(Math.random() * bases.length)] ?? '';
      const answer = await putAsset(base, assetId, png, { mode: UploadMode.raw, contentType: 'image/png' });
      if (answer.status !== 202) throw new Error(`PUT ${assetId} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return { version: answer.body.version ?? 0, runId: answer.body.run_id ?? '' };
    },
    async read(assetId, profile) {
      const read = await getProfile(bases[reads++ % bases.length] ?? '', assetId, profile);
      return { status: read.status, version: read.version ?? 0, etag: read.etag ?? '', bytes: read.bytes };
    },
    async settle(runId) {
      const run = await waitUntil('the run to settle', async () => {
        const r = await getRunJson(bases[0] ?? '', runId);
        return SETTLED_RUN_STATUSES.includes(r.status) ? r : undefined;
      }, 30_000, 100);
      const profiles = stageOutput<{ profiles: Record<string, { artifact: string }> }>(run, 'render')?.profiles ?? {};
      return { status: run.status, error: run.error, renders: Object.fromEntries(Object.entries(profiles).map(([name, p]) => [name, p.artifact])) };
    },
  };
}

const { sqlite, postgres } = qrE2eStoreCases();

const CASES: [QrE2eStoreCase, ArtifactCase][] = [
  [sqlite, fsArtifacts],
  [postgres, fsArtifacts],
  [sqlite, s3Artifacts],
];

for (const [storeCase, artifactCase] of CASES) describe(`${storeCase.name}, ${artifactCase.name}: two kiln serve processes racing versions of one asset`, { skip: storeCase.skip }, () => {
  test('only the newest version is published at the end, and no reader of either server ever sees an older version after a newer one', { timeout: 60_000 }, async (t) => {
    const startedAt = Date.now();
    const dir = await mkdtemp(join(tmpdir(), 'kiln-asset-versions-'));
    const servers: ServeProcess[] = [];
    const store = await storeCase.open(dir);
    const artifacts = await artifactCase.open(dir);
    t.after(async () => {
      for (const s of servers) killIfRunning(s.proc);
      await Promise.all(servers.map((s) => s.proc.exited));
      await store.destroy();
      artifacts.close();
      await rm(dir, { recursive: true, force: true });
    });
    await writeFile(join(dir, 'kiln.yaml'), `${artifacts.yaml}worker:\n  pollMs: 50\n`);
    const env = cleanEnv({ ...store.env, KILN_LOG_LEVEL: 'warn' });
    const started = await Promise.allSettled([0, 1].map(() => startServe(store.args, dir, env)));
    for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const summary = await raceVersions(
      serversDriver(servers.map((s) => s.base)),
      'race',
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${servers.map((s, i) => `--- serve ${i} ---\n${s.proc.output()}`).join('\n')}`);
    });
    t.diagnostic(`${summary}; wall time ${Date.now() - startedAt} ms`);
  });
});
