import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { NotFoundError, PipelineError, ValidationError } from '../../src/core/errors.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kiln-artifacts-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** Everything an async iterable yields. */
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

function listAll(store: { list(): AsyncIterable<{ ref: string; size: number; modifiedAt: number }> }) {
  return collect(store.list());
}

const statMtime = (path: string): number => statSync(path).mtimeMs;

async function* chunksOf(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

describe('fs artifact store', () => {
  test('put stores bytes under objects/sha256/ab/cd/<hex> and get returns them', async () => {
    const store = createFsArtifactStore({ root });
    const bytes = Buffer.from('hello kiln');
    const hex = sha256(bytes);
    const ref = await store.put(bytes, { mediaType: 'text/plain' });
    assert.deepEqual(ref, { ref: `sha256:${hex}`, size: bytes.byteLength, mediaType: 'text/plain' });
    assert.equal(store.pathOf(ref.ref), join(root, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex));
    assert.deepEqual(Buffer.from(await store.get(ref.ref, { verify: true })), bytes);
    assert.equal(await store.has(ref.ref), true);
    assert.deepEqual(await store.stat(ref.ref), ref);
    assert.deepEqual(filesUnder(join(root, 'tmp')), []);
  });

  test('a stream of chunks and the same bytes in one buffer are one object', async () => {
    const store = createFsArtifactStore({ root });
    const streamed = await store.put(chunksOf('abc', '', 'def'));
    const buffered = await store.put(Buffer.from('abcdef'));
    assert.equal(streamed.ref, buffered.ref);
    assert.equal(streamed.size, 6);
    assert.equal(streamed.mediaType, 'application/octet-stream');
    assert.equal(filesUnder(join(root, 'objects')).length, 2); // the object and its sidecar
  });

  test('concurrent puts of the same content leave exactly one object and no temp files', async () => {
    const store = createFsArtifactStore({ root });
    const bytes = Buffer.alloc(256 * 1024, 7);
    const refs = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? store.put(bytes) : store.put(chunksOf(bytes.toString('latin1'))))));
    assert.equal(new Set(refs.map((r) => r.ref)).size, 1);
    const hex = sha256(bytes);
    assert.deepEqual(filesUnder(join(root, 'objects')), [join('sha256', hex.slice(0, 2), hex.slice(2, 4), hex), join('sha256', hex.slice(0, 2), hex.slice(2, 4), `${hex}.json`)]);
    assert.deepEqual(filesUnder(join(root, 'tmp')), []);
    assert.deepEqual(Buffer.from(await store.get(refs[0]!.ref, { verify: true })), bytes);
  });

  test('a stream over maxBytes is refused with PAYLOAD_TOO_LARGE and leaves no temp or object', async () => {
    const store = createFsArtifactStore({ root });
    await assert.rejects(store.put(chunksOf('12345', '67890'), { maxBytes: 8 }), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.equal(err.code, 'PAYLOAD_TOO_LARGE');
      return true;
    });
    await assert.rejects(store.put(Buffer.alloc(9), { maxBytes: 8 }), { code: 'PAYLOAD_TOO_LARGE' });
    assert.deepEqual(filesUnder(root), []);
    await store.put(Buffer.alloc(8), { maxBytes: 8 });
  });

  test('a temp left by a crash mid-write is collected after the grace period and not before', async () => {
    const clock = createFakeClock();
    const store = createFsArtifactStore({ root, clock });
    mkdirSync(join(root, 'tmp'));
    const orphan = join(root, 'tmp', 'deadbeef.tmp');
    writeFileSync(orphan, 'half an obj');
    const writtenAt = clock.now();
    utimesSync(orphan, new Date(writtenAt), new Date(writtenAt));
    const graceMs = 60_000;

    await clock.advance(graceMs - 1);
    assert.equal(await store.collectOrphanedTemps(graceMs), 0);
    assert.deepEqual(filesUnder(join(root, 'tmp')), ['deadbeef.tmp']);

    await clock.advance(2);
    assert.equal(await store.collectOrphanedTemps(graceMs), 1);
    assert.deepEqual(filesUnder(join(root, 'tmp')), []);
    assert.deepEqual(filesUnder(root), [], 'a half-written object never became visible');
  });

  test('listTemps reports every temp with its size and last write, and removes nothing', async () => {
    const store = createFsArtifactStore({ root });
    assert.deepEqual(await collect(store.listTemps()), [], 'no tmp/ yet');
    mkdirSync(join(root, 'tmp'));
    writeFileSync(join(root, 'tmp', 'a.tmp'), 'half');
    writeFileSync(join(root, 'tmp', 'not-a-temp'), 'stray');
    utimesSync(join(root, 'tmp', 'a.tmp'), new Date(1_000_000), new Date(1_000_000));
    assert.deepEqual(await collect(store.listTemps()), [{ path: 'tmp/a.tmp', size: 4, modifiedAt: 1_000_000 }]);
    assert.deepEqual(filesUnder(join(root, 'tmp')).sort(), ['a.tmp', 'not-a-temp']);
  });

  test('collecting temps before anything was written finds none', async () => {
    assert.equal(await createFsArtifactStore({ root: join(root, 'fresh') }).collectOrphanedTemps(0), 0);
  });

  test('an object whose bytes changed at the same size is caught by verify', async () => {
    const store = createFsArtifactStore({ root });
    const ref = await store.put(Buffer.from('original'));
    writeFileSync(store.pathOf(ref.ref), 'tampered');
    // Without verify only the size is checked, which still matches.
    assert.equal(Buffer.from(await store.get(ref.ref)).toString(), 'tampered');
    await assert.rejects(store.get(ref.ref, { verify: true }), (err: unknown) => {
      assert.ok(err instanceof PipelineError);
      assert.equal(err.code, 'ARTIFACT_CORRUPT');
      return true;
    });
  });

  test('a truncated object is corrupt even without verify, is not reported present, and a new put repairs it', async () => {
    const store = createFsArtifactStore({ root });
    const bytes = Buffer.from('a longer piece of content');
    const ref = await store.put(bytes);
    truncateSync(store.pathOf(ref.ref), 4);
    await assert.rejects(store.get(ref.ref), { code: 'ARTIFACT_CORRUPT' });
    assert.equal(await store.has(ref.ref), false);
    await store.put(bytes);
    assert.deepEqual(Buffer.from(await store.get(ref.ref, { verify: true })), bytes);
  });

  test('an object without its size record is corrupt', async () => {
    const store = createFsArtifactStore({ root });
    const ref = await store.put(Buffer.from('x'));
    rmSync(`${store.pathOf(ref.ref)}.json`);
    await assert.rejects(store.get(ref.ref), { code: 'ARTIFACT_CORRUPT' });
  });

  test('a well-formed ref that is not stored is NotFoundError; a malformed ref is ValidationError', async () => {
    const store = createFsArtifactStore({ root });
    const missing = `sha256:${'0'.repeat(64)}`;
    await assert.rejects(store.get(missing), NotFoundError);
    assert.equal(await store.has(missing), false);
    assert.equal(await store.stat(missing), null);
    for (const bad of ['sha256:abc', `md5:${'0'.repeat(64)}`, `sha256:${'A'.repeat(64)}`, `sha256:${'0'.repeat(64)}/../x`]) {
      await assert.rejects(store.get(bad), ValidationError, bad);
      assert.throws(() => store.pathOf(bad), ValidationError);
    }
  });

  test('a put after the store\'s directories were removed behind its back recreates them', async () => {
    const store = createFsArtifactStore({ root });
    await store.put(Buffer.from('first'));
    rmSync(join(root, 'objects'), { recursive: true, force: true });
    rmSync(join(root, 'tmp'), { recursive: true, force: true });
    const ref = await store.put(Buffer.from('first'));
    assert.deepEqual(await store.get(ref.ref), Buffer.from('first'));
    const other = await store.put(Buffer.from('second, in a directory never made before'));
    assert.equal(await store.has(other.ref), true);
  });

  test('putting content that is already stored intact rewrites nothing but refreshes its modification time', async () => {
    const store = createFsArtifactStore({ root });
    const ref = await store.put(Buffer.from('once'));
    const inode = statSync(store.pathOf(ref.ref)).ino;
    const old = new Date('2020-01-01T00:00:00Z');
    utimesSync(store.pathOf(ref.ref), old, old);
    await store.put(Buffer.from('once'));
    assert.deepEqual(filesUnder(join(root, 'tmp')), []);
    assert.equal(statSync(store.pathOf(ref.ref)).ino, inode);
    assert.ok(statMtime(store.pathOf(ref.ref)) > old.getTime());
  });

  test('list reports every stored object once with its size; remove deletes object and sidecar', async () => {
    const store = createFsArtifactStore({ root });
    assert.deepEqual(await listAll(store), []);
    const a = await store.put(Buffer.from('aaa'));
    const b = await store.put(Buffer.from('bbbbb'));
    await store.put(Buffer.from('aaa'));
    assert.deepEqual((await listAll(store)).map((o) => [o.ref, o.size]).sort(), [[a.ref, 3], [b.ref, 5]].sort());
    assert.equal(await store.remove(a.ref), true);
    assert.equal(await store.remove(a.ref), false);
    assert.equal(await store.has(a.ref), false);
    assert.deepEqual((await listAll(store)).map((o) => o.ref), [b.ref]);
    assert.deepEqual(filesUnder(join(root, 'objects')).filter((f) => f.includes(a.ref.slice(7))), []);
  });

  test('empty content is a valid artifact', async () => {
    const store = createFsArtifactStore({ root });
    const ref = await store.put(new Uint8Array(0));
    assert.equal(ref.ref, `sha256:${sha256(new Uint8Array(0))}`);
    assert.equal((await store.get(ref.ref, { verify: true })).byteLength, 0);
  });
});
