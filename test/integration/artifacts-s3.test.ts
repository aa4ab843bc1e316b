/**
 * The S3 artifact store on a real S3-compatible server (s3rver in a child process, or the bucket
 * of KILN_S3_URL): the behaviour every artifact store owes (test/support/artifact-store-suite.ts),
 * then what only S3 has: its keys, outages, the `s3://` URL.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../../src/artifacts/s3-client.ts';
import { createS3ArtifactStore, REFRESH_AFTER_MS, type S3ArtifactStore } from '../../src/artifacts/s3-artifact-store.ts';
import type { S3ArtifactsSettings } from '../../src/artifacts/s3-client.ts';
import { systemClock, type Clock } from '../../src/core/clock.ts';
import { ArtifactsUnavailableError, NotFoundError, ValidationError } from '../../src/core/errors.ts';
import { artifactStoreSuite, collect, sha256, type TestedStore } from '../support/artifact-store-suite.ts';
import { sharedS3, type S3TestServer } from '../support/s3-server.ts';

let s3: S3TestServer;
let settings: S3ArtifactsSettings;
let raw: S3Client;
const stores: S3ArtifactStore[] = [];

before(async () => {
  s3 = await sharedS3();
});
beforeEach(() => {
  settings = s3.newStore();
  raw?.destroy();
  raw = createS3Client(settings);
});
after(() => {
  for (const store of stores.splice(0)) store.close();
  raw?.destroy();
});

/** How far the suite's stores see time ahead of the system clock (`age` moves it). */
let skewMs = 0;
const skewedClock: Clock = { ...systemClock, now: () => Date.now() + skewMs };

function create(options: { clock?: Clock } = {}): S3ArtifactStore {
  const store = createS3ArtifactStore({ ...settings, clock: skewedClock, ...options });
  stores.push(store);
  return store;
}

const s3Of = (store: TestedStore): S3ArtifactStore => store as S3ArtifactStore;

async function putRaw(store: S3ArtifactStore, key: string, bytes: Uint8Array): Promise<void> {
  await raw.send(new PutObjectCommand({ Bucket: store.bucket, Key: key, Body: bytes, ContentLength: bytes.byteLength }));
}

describe('S3 artifact store: the behaviour every artifact store owes', () => {
  artifactStoreSuite({
    create,
    overwrite: (store, ref, bytes) => putRaw(s3Of(store), s3Of(store).keyOf(ref), bytes),
    plantTemp: (store, name, bytes) => putRaw(s3Of(store), s3Of(store).keyOf(`sha256:${'0'.repeat(64)}`).replace(/objects\/.*$/, `tmp/${name}`), bytes),
    // S3 sets LastModified itself (to the second): wait until a write would get a later one; and
    // the store rewrites only objects older than REFRESH_AFTER_MS by its clock: move that past it.
    age: async (store, ref) => {
      const listed = (await collect(store.list())).find((o) => o.ref === ref);
      assert.ok(listed, `${ref} is listed`);
      while (Date.now() < listed.modifiedAt + 1_000) await new Promise((r) => setTimeout(r, 50));
      skewMs += REFRESH_AFTER_MS;
    },
  });
});

describe('S3 artifact store: S3 itself', () => {
  test('a put of content stored less than REFRESH_AFTER_MS ago sends nothing: the object is not rewritten', async () => {
    const store = create({ clock: systemClock });
    const ref = await store.put(Buffer.from('fresh'));
    const modifiedAt = async () => (await collect(store.list())).find((o) => o.ref === ref.ref)?.modifiedAt;
    const first = await modifiedAt();
    // LastModified has whole seconds: a rewrite now would move it.
    await new Promise((r) => setTimeout(r, 1_100));
    assert.deepEqual(await store.put(Buffer.from('fresh')), ref);
    assert.equal(await modifiedAt(), first);
  });

  test('objects are keyed <prefix>/objects/sha256/ab/cd/<hex> and keep their first writer\'s media type', async () => {
    const store = create();
    const bytes = Buffer.from('<svg/>');
    const hex = sha256(bytes);
    const ref = await store.put(bytes, { mediaType: 'image/svg+xml' });
    const prefix = settings.url.replace(/^s3:\/\/[^/]+\//, '');
    assert.equal(store.keyOf(ref.ref), `${prefix}/objects/sha256/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex}`);
    await store.put(bytes, { mediaType: 'text/plain' });
    assert.equal((await store.stat(ref.ref))?.mediaType, 'image/svg+xml');
    const opened = await store.read(ref.ref);
    assert.deepEqual([opened.size, opened.mediaType, Buffer.from(await collectBytes(opened.body)).toString()], [6, 'image/svg+xml', '<svg/>']);
    await assert.rejects(store.read(`sha256:${'1'.repeat(64)}`), NotFoundError);
  });

  test('an object someone overwrote is repaired by the next put of its content', async () => {
    const store = create();
    const ref = await store.put(Buffer.from('original'));
    await putRaw(store, store.keyOf(ref.ref), Buffer.from('tampered'));
    await store.put(Buffer.from('original'));
    assert.equal(Buffer.from(await store.get(ref.ref, { verify: true })).toString(), 'original');
  });

  test('keys that are not named like an object are not listed', async () => {
    const store = create();
    const ref = await store.put(Buffer.from('real'));
    await putRaw(store, store.keyOf(ref.ref).replace(/[0-9a-f]{64}$/, 'notes.txt'), Buffer.from('stray'));
    await putRaw(store, store.keyOf(`sha256:${'ab'.repeat(32)}`).replace(/\/ab\/ab\//, '/cd/ef/'), Buffer.from('misfiled'));
    assert.deepEqual((await collect(store.list())).map((o) => o.ref), [ref.ref]);
  });

  test('a malformed s3:// URL is a ValidationError', () => {
    for (const url of ['s3:/bucket', 'http://bucket/x', 's3://']) assert.throws(() => createS3ArtifactStore({ ...settings, url }), ValidationError, url);
  });

  test('S3 down: every operation is ARTIFACTS_UNAVAILABLE (retryable, with a Retry-After), and the store works again once S3 is back', async (t) => {
    if (!s3.owned) return t.skip('KILN_S3_URL names a server this test cannot stop');
    const store = create();
    const kept = await store.put(Buffer.from('written before the outage'));
    await s3.stop();
    try {
      const attempts: [string, () => Promise<unknown>][] = [
        ['put', () => store.put(Buffer.from('written during the outage'))],
        ['get', () => store.get(kept.ref)],
        ['has', () => store.has(kept.ref)],
        ['list', () => collect(store.list())],
        ['listTemps', () => collect(store.listTemps())],
        ['remove', () => store.remove(kept.ref)],
        ['checkWritable', () => store.checkWritable()],
      ];
      for (const [name, attempt] of attempts) {
        await assert.rejects(attempt(), (err: unknown) => {
          assert.ok(err instanceof ArtifactsUnavailableError, `${name}: ${String(err)}`);
          assert.equal(err.code, 'ARTIFACTS_UNAVAILABLE');
          assert.equal(err.retryable, true);
          assert.ok(Number((err.details as { retryAfterMs?: number }).retryAfterMs) > 0);
          return true;
        });
      }
    } finally {
      await s3.start();
    }
    assert.equal(Buffer.from(await store.get(kept.ref, { verify: true })).toString(), 'written before the outage');
    const after = await store.put(Buffer.from('written after the outage'));
    assert.equal(await store.has(after.ref), true);
    await store.checkWritable();
  });
});

async function collectBytes(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of body) parts.push(chunk);
  return Buffer.concat(parts);
}
