import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { createFsArtifactStore, type FsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { ValidationError } from '../../src/core/errors.ts';
import { artifactStoreSuite, chunksOf, collect, sha256, type TestedStore } from '../support/artifact-store-suite.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kiln-artifacts-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

const statMtime = (path: string): number => statSync(path).mtimeMs;
const fs = (store: TestedStore): FsArtifactStore => store as FsArtifactStore;

/** The shared suite on the filesystem store, with `maxBytes` when given. */
const fsSuite = (maxBytes?: number): void =>
  artifactStoreSuite({
    create: (options) => createFsArtifactStore({ root, ...(maxBytes === undefined ? {} : { maxBytes }), ...options }),
    overwrite: async (store, ref, bytes) => writeFileSync(fs(store).pathOf(ref), bytes),
    plantTemp: async (_store, name, bytes) => {
      mkdirSync(join(root, 'tmp'), { recursive: true });
      writeFileSync(join(root, 'tmp', name), bytes);
    },
    age: async (store, ref) => {
      const old = new Date('2020-01-01T00:00:00Z');
      utimesSync(fs(store).pathOf(ref), old, old);
    },
  });

describe('fs artifact store: the behaviour every artifact store owes', () => fsSuite());
describe('fs artifact store with a roomy byte limit (artifacts.maxBytes): the same behaviour', () => fsSuite(1 << 30));

describe('fs artifact store: files on disk', () => {
  test('an object is objects/sha256/ab/cd/<hex> beside its sidecar, and a put leaves no temp file', async () => {
    const store = createFsArtifactStore({ root });
    const bytes = Buffer.alloc(256 * 1024, 7);
    const hex = sha256(bytes);
    const refs = await Promise.all(Array.from({ length: 4 }, (_, i) => (i % 2 ? store.put(bytes) : store.put(chunksOf(bytes.toString('latin1'))))));
    assert.equal(store.pathOf(refs[0]!.ref), join(root, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex));
    assert.deepEqual(filesUnder(join(root, 'objects')), [join('sha256', hex.slice(0, 2), hex.slice(2, 4), hex), join('sha256', hex.slice(0, 2), hex.slice(2, 4), `${hex}.json`)]);
    assert.deepEqual(filesUnder(join(root, 'tmp')), []);
    for (const bad of ['sha256:abc', `sha256:${'0'.repeat(64)}/../x`]) assert.throws(() => store.pathOf(bad), ValidationError);
  });

  test('a refused put leaves no file at all', async () => {
    const store = createFsArtifactStore({ root });
    await assert.rejects(store.put(chunksOf('12345', '67890'), { maxBytes: 8 }), { code: 'PAYLOAD_TOO_LARGE' });
    await assert.rejects(store.put(Buffer.alloc(9), { maxBytes: 8 }), { code: 'PAYLOAD_TOO_LARGE' });
    assert.deepEqual(filesUnder(root), []);
  });

  test('listTemps reports a temp\'s last write, skips other names, and finds none before tmp/ exists', async () => {
    const store = createFsArtifactStore({ root });
    assert.deepEqual(await collect(store.listTemps()), [], 'no tmp/ yet');
    mkdirSync(join(root, 'tmp'));
    writeFileSync(join(root, 'tmp', 'a.tmp'), 'half');
    writeFileSync(join(root, 'tmp', 'not-a-temp'), 'stray');
    utimesSync(join(root, 'tmp', 'a.tmp'), new Date(1_000_000), new Date(1_000_000));
    assert.deepEqual(await collect(store.listTemps()), [{ path: 'tmp/a.tmp', size: 4, modifiedAt: 1_000_000 }]);
    assert.deepEqual(filesUnder(join(root, 'tmp')).sort(), ['a.tmp', 'not-a-temp']);
    assert.equal(await createFsArtifactStore({ root: join(root, 'fresh') }).collectOrphanedTemps(0), 0);
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

  test('putting content that is already stored intact rewrites nothing (same file) but refreshes its mtime', async () => {
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

  test('remove deletes the object and its sidecar', async () => {
    const store = createFsArtifactStore({ root });
    const a = await store.put(Buffer.from('aaa'));
    assert.equal(await store.remove(a.ref), true);
    assert.deepEqual(filesUnder(join(root, 'objects')).filter((f) => f.includes(a.ref.slice(7))), []);
  });
});
