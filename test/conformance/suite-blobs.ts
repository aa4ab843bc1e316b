/**
 * Conformance, blobs sub-port: small content-addressed objects kept in the store (the inline
 * tier of the artifact store), with the removal semantics of `ArtifactStore.remove`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe } from 'node:test';
import { ValidationError } from '../../src/core/errors.ts';
import type { NewBlob } from '../../src/core/ports/blobs.ts';
import type { StoreHarness } from './fixture.ts';
import { storeTest } from './fixture.ts';

/** A blob of `bytes` under its real sha256 ref. */
function blobOf(bytes: Uint8Array, mediaType = 'image/png'): NewBlob {
  return { ref: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, mediaType, bytes };
}

/** Bytes with every value 0..255, NULs and invalid UTF-8 included. */
const BINARY = Uint8Array.from({ length: 512 }, (_, i) => (i * 7) % 256);

/** Refs every store must refuse as malformed. */
const MALFORMED_REFS = ['sha256:abc', `sha256:${'A'.repeat(64)}`, `md5:${'a'.repeat(64)}`, ''];

/** Declares the blobs sub-port's tests: `put`, `get`, `has`, `list`, `remove`. */
export function describeBlobsPort(harness: StoreHarness): void {
  describe('blobs sub-port', () => {
    const test = storeTest(harness);

    test('put then get round-trips binary bytes (NULs included) and the media type', async ({ store }) => {
      const blob = blobOf(Uint8Array.from([0x00, 0x89, 0x50, 0x00, 0xff, 0x00, ...BINARY]));
      await store.blobs.put(blob);
      const got = await store.blobs.get(blob.ref);
      assert.ok(got);
      assert.equal(got.mediaType, 'image/png');
      assert.deepEqual(Buffer.from(got.bytes), Buffer.from(blob.bytes));
      assert.equal(await store.blobs.get(blobOf(Uint8Array.from([1, 2, 3])).ref), null, 'an unknown ref is null');
    });

    test('a second put of a ref keeps the first bytes and media type, and refreshes modifiedAt', async ({ store, clock }) => {
      const blob = blobOf(BINARY, 'image/png');
      await store.blobs.put(blob);
      const [first] = await store.blobs.list();
      await clock.advance(1_000);
      await store.blobs.put({ ...blob, mediaType: 'application/octet-stream' });
      const got = await store.blobs.get(blob.ref);
      assert.equal(got?.mediaType, 'image/png');
      assert.deepEqual(Buffer.from(got?.bytes ?? []), Buffer.from(BINARY));
      const [second] = await store.blobs.list();
      assert.ok(first && second);
      assert.equal(second.modifiedAt, first.modifiedAt + 1_000);
    });

    test('has is true only for stored refs', async ({ store }) => {
      const blob = blobOf(BINARY);
      assert.equal(await store.blobs.has(blob.ref), false);
      await store.blobs.put(blob);
      assert.equal(await store.blobs.has(blob.ref), true);
    });

    test('list gives every blob sorted by ref, with its size and last write (store clock)', async ({ store, clock }) => {
      assert.deepEqual(await store.blobs.list(), []);
      const blobs = [blobOf(Uint8Array.from([1])), blobOf(Uint8Array.from([0, 0, 0])), blobOf(BINARY), blobOf(new Uint8Array(0))];
      const written = new Map<string, number>();
      for (const blob of blobs) {
        written.set(blob.ref, await store.now());
        await store.blobs.put(blob);
        await clock.advance(10);
      }
      const expected = blobs
        .map((b) => ({ ref: b.ref, size: b.bytes.byteLength, modifiedAt: written.get(b.ref) }))
        .sort((a, b) => (a.ref < b.ref ? -1 : 1));
      assert.deepEqual(await store.blobs.list(), expected);
    });

    test('remove deletes a blob once; without notModifiedAfter it removes whatever its age', async ({ store }) => {
      const blob = blobOf(BINARY);
      await store.blobs.put(blob);
      assert.equal(await store.blobs.remove(blob.ref), true);
      assert.equal(await store.blobs.get(blob.ref), null);
      assert.equal(await store.blobs.has(blob.ref), false);
      assert.deepEqual(await store.blobs.list(), []);
      assert.equal(await store.blobs.remove(blob.ref), false, 'a second remove finds nothing');
    });

    test('remove with notModifiedAfter keeps a blob written after that time (a re-put made it live)', async ({ store, clock }) => {
      const blob = blobOf(BINARY);
      await store.blobs.put(blob);
      const [listed] = await store.blobs.list();
      assert.ok(listed);
      await clock.advance(500);
      await store.blobs.put(blob);
      assert.equal(await store.blobs.remove(blob.ref, { notModifiedAfter: listed.modifiedAt }), false);
      assert.equal(await store.blobs.has(blob.ref), true);
      const [again] = await store.blobs.list();
      assert.ok(again);
      assert.equal(await store.blobs.remove(blob.ref, { notModifiedAfter: again.modifiedAt }), true, 'at its own time it goes');
      assert.equal(await store.blobs.has(blob.ref), false);
    });

    test('a malformed ref is a ValidationError on every method', async ({ store }) => {
      for (const ref of MALFORMED_REFS) {
        const isValidation = (err: unknown): boolean => err instanceof ValidationError && err.code === 'VALIDATION_FAILED';
        await assert.rejects(store.blobs.put({ ref, mediaType: 'image/png', bytes: BINARY }), isValidation);
        await assert.rejects(store.blobs.get(ref), isValidation);
        await assert.rejects(store.blobs.has(ref), isValidation);
        await assert.rejects(store.blobs.remove(ref), isValidation);
      }
      assert.deepEqual(await store.blobs.list(), []);
    });
  });
}
