/**
 * Crash at the worst moment, with real processes: `kiln serve --no-worker` takes a QR request and
 * a `kiln worker` started with `KILN_CRASH_BEFORE_COMMIT=qr-code.render` renders it (the image is
 * written, the cache entry is ready) and SIGKILLs itself before its commit. A second worker takes
 * the job over once the short lease expires. The retry must reuse what the dead worker left: the
 * cache entry is not rebuilt (its row is unchanged, field for field, from the moment after the crash
 * to the end), the object file is the same file (same inode and mtime), there is one object and
 * one publication, and the served image decodes. Runs on SQLite and on PostgreSQL, with the image
 * in files, in S3, and inline (a blob of the store: the same, through its last write time).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CRASH_BEFORE_COMMIT_ENV } from '../../src/cli/runtime.ts';
import { QR_CACHE, QR_PROFILE } from '../../src/pipelines/qr-code/pipeline.ts';
import { decodeQr } from '../support/qr-decode.ts';
import { cleanEnv, exitWithin, spawnKiln, waitUntil } from './kiln-process.ts';
import { startServe } from './qr-serve.ts';
import { fsArtifacts, inlineArtifacts, s3Artifacts, type ArtifactCase, type ArtifactsUnderTest } from '../support/artifact-cases.ts';
import { openE2eScene, qrE2eStoreCases, type QrE2eStoreCase } from './qr-stores.ts';

const CONTENT = 'kiln crash test: ünïcödé, 漢字, 🔥 and a query ?a=1&b=2';
const LEASE_MS = 1_500;
/** Bounds each wait on a process; the whole test normally takes under 10 s. */
const STEP_TIMEOUT_MS = 20_000;

const KILN_YAML = (artifactsYaml: string): string => `
${artifactsYaml}worker:
  pollMs: 100
  reapMs: 200
pipelines:
  qr-code:
    stages:
      render: { leaseMs: ${LEASE_MS}, heartbeatMs: 300 }
`;

interface ObjectFile {
  hex: string;
  ino: number;
  mtimeMs: number;
}

/**
 * The content-addressed objects of the store (on S3: key and LastModified; inline: the blob's last
 * write; a rewrite moves either).
 */
async function listObjects(artifacts: ArtifactsUnderTest): Promise<ObjectFile[]> {
  if (artifacts.root !== undefined) return listObjectFiles(artifacts.root);
  const objects: ObjectFile[] = [];
  for await (const o of artifacts.store.list()) objects.push({ hex: o.ref.slice('sha256:'.length), ino: 0, mtimeMs: o.modifiedAt });
  return objects;
}

/** The content-addressed objects under `<root>/objects` (sidecars aside), with their inode and mtime. */
async function listObjectFiles(root: string): Promise<ObjectFile[]> {
  const objectsDir = join(root, 'objects');
  const entries = await readdir(objectsDir, { recursive: true, withFileTypes: true }).catch(() => []);
  const files = entries.filter((e) => e.isFile() && /^[0-9a-f]{64}$/.test(e.name));
  return Promise.all(
    files.map(async (e) => {
      const s = await stat(join(e.parentPath, e.name));
      return { hex: e.name, ino: s.ino, mtimeMs: s.mtimeMs };
    }),
  );
}


const { sqlite, postgres } = qrE2eStoreCases();

const CASES: [QrE2eStoreCase, ArtifactCase][] = [
  [sqlite, fsArtifacts],
  [postgres, fsArtifacts],
  [sqlite, s3Artifacts],
  // The default setting: the image (1.4 KB) is a blob of the store, made durable by its commit.
  [sqlite, inlineArtifacts],
  [postgres, inlineArtifacts],
];

for (const [storeCase, artifactCase] of CASES) describe(`${storeCase.name}, ${artifactCase.name}: a worker SIGKILLed after rendering, before its commit`, { skip: storeCase.skip }, () => {
  test('the retry reuses the cached artifact: no rebuild, one object, one publication, and the served image decodes', { timeout: 60_000 }, async (t) => {
    const startedAt = Date.now();
    const { dir, store: e2eStore, procs } = await openE2eScene(t, storeCase, 'kiln-qr-crash-');
    const artifacts = await artifactCase.open(dir, e2eStore.store.blobs);
    t.after(() => artifacts.close());
    await writeFile(join(dir, 'kiln.yaml'), KILN_YAML(artifacts.yaml));
    const env = cleanEnv({ ...e2eStore.env, KILN_LOG_LEVEL: 'warn' });
    const { store } = e2eStore;

    const doomed = spawnKiln(['worker', '--worker-id', 'doomed', ...e2eStore.args], dir, { ...env, [CRASH_BEFORE_COMMIT_ENV]: 'qr-code.render' });
    procs.push(doomed);
    const api = await startServe(['--no-worker', ...e2eStore.args], dir, env);
    procs.push(api.proc);

    const accepted = await fetch(`${api.base}/v1/qr`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: CONTENT, wait: 0 }) });
    assert.equal(accepted.status, 202, await accepted.clone().text());
    const { request_id: runId, content_hash: hash } = (await accepted.json()) as { request_id: string; content_hash: string };

    assert.equal((await exitWithin(doomed, 'the crashing worker to kill itself', STEP_TIMEOUT_MS)).signal, 'SIGKILL', doomed.output());

    // The worst moment, as intended: the image is stored and its cache entry is ready, nothing is committed.
    const entryAfterCrash = await store.cache.get(QR_CACHE, hash);
    assert.ok(entryAfterCrash?.status === 'ready', 'the dead worker finished the build');
    const artifactRef = (entryAfterCrash.value as { artifact: string }).artifact;
    const objectsAfterCrash = await listObjects(artifacts);
    assert.deepEqual(objectsAfterCrash.map((o) => `sha256:${o.hex}`), [artifactRef], 'the dead worker stored the image');
    if (artifactCase === inlineArtifacts) assert.deepEqual(await listObjectFiles(join(dir, 'artifacts')), [], 'inline: the image is no file');
    assert.equal(await store.publications.get(hash, QR_PROFILE), null);
    assert.equal((await store.reads.readLedger(runId)).length, 0, 'nothing was committed');

    const survivor = spawnKiln(['worker', '--worker-id', 'survivor', ...e2eStore.args], dir, env);
    procs.push(survivor);
    const done = await waitUntil(
      'the run to succeed on the second worker',
      async () => {
        const detail = await store.reads.getRun(runId);
        return detail?.run.status === 'succeeded' ? detail : undefined;
      },
      STEP_TIMEOUT_MS,
    ).catch((err: unknown) => assert.fail(`${String(err)}\n--- survivor ---\n${survivor.output()}\n--- api ---\n${api.proc.output()}`));

    assert.deepEqual(
      done.stages.map((s) => [s.stage, s.status, s.attempts]),
      [
        ['render', 'succeeded', 2],
        ['publish', 'succeeded', 1],
      ],
      'render ran twice (the crash, then the retry) and is recorded once',
    );
    assert.deepEqual((await store.reads.readLedger(runId)).map((e) => e.stage), ['render', 'publish']);
    // A rebuild takes the builder lease and completes the entry again, which rewrites updatedAt
    // and expiresAt (a fresh TTL from the new build); an unchanged row means the retry was a cache hit.
    assert.deepEqual(await store.cache.get(QR_CACHE, hash), entryAfterCrash, 'the cache entry was not rebuilt');
    assert.deepEqual(await listObjects(artifacts), objectsAfterCrash, 'one object, the same file the dead worker wrote');
    assert.equal(await e2eStore.countPublications(hash), 1, 'one publication for the hash');
    assert.equal((await store.publications.get(hash, QR_PROFILE))?.artifactRef, artifactRef);

    const served = await fetch(`${api.base}/v1/qr/${hash}`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('etag'), `"${hash}"`);
    const image = new Uint8Array(await served.arrayBuffer());
    assert.equal(`sha256:${createHash('sha256').update(image).digest('hex')}`, artifactRef, 'the served bytes are the stored object');
    assert.deepEqual(await decodeQr(image, served.headers.get('content-type') ?? ''), [CONTENT]);

    survivor.child.kill('SIGTERM');
    assert.deepEqual(await exitWithin(survivor, 'the second worker to stop', STEP_TIMEOUT_MS), { code: 0, signal: null }, survivor.output());
    t.diagnostic(`wall time ${Date.now() - startedAt} ms`);
  });
});
