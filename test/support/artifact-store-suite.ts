/**
 * The behaviour every ArtifactStore owes, run on each store (test/unit/artifacts.test.ts: the
 * filesystem store; test/integration/artifacts-s3.test.ts: the S3 store on s3rver). What only one
 * store has (sidecars, directories, inodes; S3 outages) stays in that store's file.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { createFakeClock, type Clock } from '../../src/core/clock.ts';
import { NotFoundError, PipelineError, ValidationError } from '../../src/core/errors.ts';
import type { ArtifactRef, ArtifactStore } from '../../src/core/ports/artifact-store.ts';

/** A store with `stat` (both stores have it). */
export type TestedStore = ArtifactStore & { stat(ref: string): Promise<ArtifactRef | null> };

/** How the suite makes and reaches behind one kind of store (a fresh, empty place per test). */
export interface ArtifactStoreHarness {
  create(options?: { clock?: Clock }): TestedStore;
  /** Replaces the stored bytes of `ref` behind the store's back (damage). */
  overwrite(store: TestedStore, ref: string, bytes: Uint8Array): Promise<void>;
  /** Leaves a temp named `name` (e.g. `x.tmp`) as a crashed write would. */
  plantTemp(store: TestedStore, name: string, bytes: Uint8Array): Promise<void>;
  /** Makes the object of `ref` older than now, as time passing would (its modifiedAt moves back, or now moves on). */
  age(store: TestedStore, ref: string): Promise<void>;
}

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Everything an async iterable yields. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

export async function* chunksOf(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

const modifiedAtOf = async (store: ArtifactStore, ref: string): Promise<number | undefined> =>
  (await collect(store.list())).find((o) => o.ref === ref)?.modifiedAt;

/** Registers the shared tests (call inside a `describe`). */
export function artifactStoreSuite(h: ArtifactStoreHarness): void {
  test('put stores bytes under their sha256 and get, has and stat find them', async () => {
    const store = h.create();
    const bytes = Buffer.from('hello kiln');
    const ref = await store.put(bytes, { mediaType: 'text/plain' });
    assert.deepEqual(ref, { ref: `sha256:${sha256(bytes)}`, size: bytes.byteLength, mediaType: 'text/plain' });
    assert.deepEqual(Buffer.from(await store.get(ref.ref, { verify: true })), bytes);
    assert.equal(await store.has(ref.ref), true);
    assert.deepEqual(await store.stat(ref.ref), ref);
    assert.deepEqual(await collect(store.listTemps()), []);
  });

  test('a stream of chunks and the same bytes in one buffer are one object', async () => {
    const store = h.create();
    const streamed = await store.put(chunksOf('abc', '', 'def'));
    const buffered = await store.put(Buffer.from('abcdef'));
    assert.equal(streamed.ref, buffered.ref);
    assert.equal(streamed.size, 6);
    assert.equal(streamed.mediaType, 'application/octet-stream');
    assert.deepEqual((await collect(store.list())).map((o) => [o.ref, o.size]), [[streamed.ref, 6]]);
  });

  test('concurrent puts of the same content, from two stores on one place, leave one intact object and no temps', async () => {
    const [one, two] = [h.create(), h.create()];
    const bytes = Buffer.alloc(256 * 1024, 7);
    const refs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => {
        const store = i % 2 ? one : two;
        return i % 4 < 2 ? store.put(bytes) : store.put(chunksOf(bytes.toString('latin1')));
      }),
    );
    assert.equal(new Set(refs.map((r) => r.ref)).size, 1);
    assert.deepEqual((await collect(one.list())).map((o) => [o.ref, o.size]), [[`sha256:${sha256(bytes)}`, bytes.byteLength]]);
    assert.deepEqual(await collect(one.listTemps()), []);
    assert.deepEqual(Buffer.from(await two.get(refs[0]!.ref, { verify: true })), bytes);
  });

  test('a stream over maxBytes is refused with PAYLOAD_TOO_LARGE and leaves no temp or object', async () => {
    const store = h.create();
    await assert.rejects(store.put(chunksOf('12345', '67890'), { maxBytes: 8 }), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.equal(err.code, 'PAYLOAD_TOO_LARGE');
      return true;
    });
    await assert.rejects(store.put(Buffer.alloc(9), { maxBytes: 8 }), { code: 'PAYLOAD_TOO_LARGE' });
    assert.deepEqual(await collect(store.list()), []);
    assert.deepEqual(await collect(store.listTemps()), []);
    await store.put(Buffer.alloc(8), { maxBytes: 8 });
  });

  test('a temp left by a crash mid-write is listed, and collected after the grace period and not before', async () => {
    const clock = createFakeClock(0);
    const store = h.create({ clock });
    await h.plantTemp(store, 'deadbeef.tmp', Buffer.from('half an obj'));
    const [temp, ...others] = await collect(store.listTemps());
    assert.deepEqual(others, []);
    assert.deepEqual([temp?.path, temp?.size], ['tmp/deadbeef.tmp', 11]);
    clock.set(temp!.modifiedAt);
    const graceMs = 60_000;

    await clock.advance(graceMs - 1);
    assert.equal(await store.collectOrphanedTemps(graceMs), 0);
    assert.equal((await collect(store.listTemps())).length, 1);

    await clock.advance(2);
    assert.equal(await store.collectOrphanedTemps(graceMs), 1);
    assert.deepEqual(await collect(store.listTemps()), []);
    assert.deepEqual(await collect(store.list()), [], 'a half-written object never became visible');
  });

  test('collecting temps before anything was written finds none', async () => {
    assert.equal(await h.create().collectOrphanedTemps(0), 0);
  });

  test('an object whose bytes changed at the same size is caught by verify', async () => {
    const store = h.create();
    const ref = await store.put(Buffer.from('original'));
    await h.overwrite(store, ref.ref, Buffer.from('tampered'));
    // Without verify only the size is checked, which still matches.
    assert.equal(Buffer.from(await store.get(ref.ref)).toString(), 'tampered');
    await assert.rejects(store.get(ref.ref, { verify: true }), (err: unknown) => {
      assert.ok(err instanceof PipelineError);
      assert.equal(err.code, 'ARTIFACT_CORRUPT');
      return true;
    });
  });

  test('a well-formed ref that is not stored is NotFoundError; a malformed ref is ValidationError', async () => {
    const store = h.create();
    const missing = `sha256:${'0'.repeat(64)}`;
    await assert.rejects(store.get(missing), NotFoundError);
    assert.equal(await store.has(missing), false);
    assert.equal(await store.stat(missing), null);
    assert.equal(await store.remove(missing), false);
    for (const bad of ['sha256:abc', `md5:${'0'.repeat(64)}`, `sha256:${'A'.repeat(64)}`, `sha256:${'0'.repeat(64)}/../x`]) {
      await assert.rejects(store.get(bad), ValidationError, bad);
      await assert.rejects(store.has(bad), ValidationError, bad);
    }
  });

  test('putting content that is already stored refreshes its modification time (GC grace starts again)', async () => {
    const store = h.create();
    const ref = await store.put(Buffer.from('once'));
    await h.age(store, ref.ref);
    const before = await modifiedAtOf(store, ref.ref);
    await store.put(Buffer.from('once'));
    const after = await modifiedAtOf(store, ref.ref);
    assert.ok(before !== undefined && after !== undefined && after > before, `${before} -> ${after}`);
    assert.deepEqual(await collect(store.listTemps()), []);
  });

  test('remove with notModifiedAfter spares an object written again since (GC grace), and removes it otherwise', async () => {
    const store = h.create();
    const ref = await store.put(Buffer.from('gc me'));
    await h.age(store, ref.ref);
    const listedAt = (await modifiedAtOf(store, ref.ref))!;
    await store.put(Buffer.from('gc me'));
    assert.equal(await store.remove(ref.ref, { notModifiedAfter: listedAt }), false);
    assert.equal(await store.has(ref.ref), true);
    const now = (await modifiedAtOf(store, ref.ref))!;
    assert.equal(await store.remove(ref.ref, { notModifiedAfter: now }), true);
    assert.equal(await store.has(ref.ref), false);
  });

  test('list reports every stored object once with its size; remove deletes it', async () => {
    const store = h.create();
    assert.deepEqual(await collect(store.list()), []);
    const a = await store.put(Buffer.from('aaa'));
    const b = await store.put(Buffer.from('bbbbb'));
    await store.put(Buffer.from('aaa'));
    assert.deepEqual((await collect(store.list())).map((o) => [o.ref, o.size]).sort(), [[a.ref, 3], [b.ref, 5]].sort());
    assert.equal(await store.remove(a.ref), true);
    assert.equal(await store.remove(a.ref), false);
    assert.equal(await store.has(a.ref), false);
    await assert.rejects(store.get(a.ref), NotFoundError);
    assert.deepEqual((await collect(store.list())).map((o) => o.ref), [b.ref]);
  });

  test('empty content is a valid artifact', async () => {
    const store = h.create();
    const ref = await store.put(new Uint8Array(0));
    assert.equal(ref.ref, `sha256:${sha256(new Uint8Array(0))}`);
    assert.equal((await store.get(ref.ref, { verify: true })).byteLength, 0);
    assert.equal(await store.has(ref.ref), true);
  });

  test('checkWritable passes on a working store and leaves nothing behind', async () => {
    const store = h.create();
    await store.checkWritable?.();
    assert.deepEqual(await collect(store.listTemps()), []);
    assert.deepEqual(await collect(store.list()), []);
  });
}
