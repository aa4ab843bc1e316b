/**
 * The inline artifact store (src/artifacts/inline-artifact-store.ts) over a real SQLite store
 * (its `blobs` table) and a real filesystem store in a temp dir: the behaviour every artifact
 * store owes, then where each put lands, damage caught through the database, and GC of both tiers.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { createFsArtifactStore, type FsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createInlineArtifactStore } from '../../src/artifacts/inline-artifact-store.ts';
import { openRuntime } from '../../src/cli/runtime.ts';
import { systemClock, type Clock } from '../../src/core/clock.ts';
import type { ArtifactStore } from '../../src/core/ports/artifact-store.ts';
import type { BlobsPort } from '../../src/core/ports/blobs.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { collectArtifacts } from '../../src/engine/artifact-gc.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { artifactStoreSuite, chunksOf, collect, sha256, type TestedStore } from '../support/artifact-store-suite.ts';

const INLINE_MAX = 1024;

let root: string;
let opened: Store[] = [];
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kiln-inline-'));
  opened = [];
});
afterEach(async () => {
  await Promise.all(opened.map((s) => s.close()));
  rmSync(root, { recursive: true, force: true });
});

const dbPath = (): string => join(root, 'kiln.db');

/** Both tiers over this test's place: the SQLite file and the artifacts dir (two calls share them). */
function openTiers(clock: Clock = systemClock): { store: Store; files: FsArtifactStore; blobs: BlobsPort } {
  const store = createSqliteStore({ path: dbPath(), clock });
  opened.push(store);
  const ready = store.migrate();
  // Each call waits for the migration the (synchronous) harness could not await.
  const blobs = Object.fromEntries(
    Object.entries(store.blobs).map(([name, method]) => [name, async (...args: unknown[]) => (await ready, (method as (...a: unknown[]) => unknown)(...args))]),
  ) as unknown as BlobsPort;
  return { store, files: createFsArtifactStore({ root: join(root, 'artifacts'), clock }), blobs };
}

/** The inline store over both tiers, with the `stat` the shared suite reads. */
function inlineOver(tiers: { files: FsArtifactStore; blobs: BlobsPort }, maxInlineBytes = INLINE_MAX): TestedStore {
  const store = createInlineArtifactStore({ blobs: tiers.blobs, underlying: tiers.files, maxInlineBytes });
  const stat: TestedStore['stat'] = async (ref) => {
    const blob = await tiers.blobs.get(ref);
    return blob ? { ref, size: blob.bytes.byteLength, mediaType: blob.mediaType } : tiers.files.stat(ref);
  };
  return Object.assign(store, { stat });
}

/** Runs `sql` on the store's file through a connection of its own (damage and ageing behind the store's back). */
function behindTheStore(sql: string, ...params: unknown[]): number {
  const db = new Database(dbPath());
  try {
    return db.prepare(sql).run(...params).changes;
  } finally {
    db.close();
  }
}

/** Object files (not sidecars) under the artifacts dir. */
function objectFiles(): string[] {
  const dir = join(root, 'artifacts', 'objects');
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => /[0-9a-f]{64}$/.test(p));
}

describe('inline artifact store: the behaviour every artifact store owes', () => {
  artifactStoreSuite({
    create: (options) => inlineOver(openTiers(options?.clock)),
    overwrite: async (_store, ref, bytes) => {
      assert.equal(behindTheStore('UPDATE blobs SET bytes = ? WHERE ref = ?', Buffer.from(bytes), ref), 1, 'the object is inline');
    },
    // Temps are the filesystem tier's: a crashed write of a stream leaves one there.
    plantTemp: async (_store, name, bytes) => {
      mkdirSync(join(root, 'artifacts', 'tmp'), { recursive: true });
      writeFileSync(join(root, 'artifacts', 'tmp', name), bytes);
    },
    age: async (_store, ref) => {
      assert.equal(behindTheStore('UPDATE blobs SET modified_at = modified_at - 3600000 WHERE ref = ?', ref), 1, 'the object is inline');
    },
  });
});

describe('inline artifact store: where each put lands', () => {
  test('a buffer up to inlineMaxBytes lands in the store and writes no file', async () => {
    const tiers = openTiers();
    const store = inlineOver(tiers);
    const bytes = Buffer.alloc(INLINE_MAX, 0);
    bytes[1] = 0x89;
    const ref = await store.put(bytes, { mediaType: 'image/png' });
    assert.deepEqual(ref, { ref: `sha256:${sha256(bytes)}`, size: INLINE_MAX, mediaType: 'image/png' });
    assert.deepEqual(objectFiles(), []);
    assert.equal(existsSync(join(root, 'artifacts')), false, 'the filesystem tier was not touched');
    assert.deepEqual((await tiers.blobs.list()).map((b) => [b.ref, b.size]), [[ref.ref, INLINE_MAX]]);
    assert.deepEqual(Buffer.from(await store.get(ref.ref, { verify: true })), bytes);
    assert.equal((await tiers.blobs.get(ref.ref))?.mediaType, 'image/png');
  });

  test('a larger buffer and any stream land in files, not in the store', async () => {
    const tiers = openTiers();
    const store = inlineOver(tiers);
    const big = await store.put(Buffer.alloc(INLINE_MAX + 1, 3));
    const streamed = await store.put(chunksOf('small', ' stream'));
    assert.deepEqual(await tiers.blobs.list(), []);
    assert.equal(objectFiles().length, 2);
    assert.equal(await tiers.files.has(big.ref), true);
    assert.equal(await tiers.files.has(streamed.ref), true);
    assert.equal(Buffer.from(await store.get(streamed.ref, { verify: true })).toString(), 'small stream');
  });

  test('maxBytes refuses a small buffer before it is stored', async () => {
    const tiers = openTiers();
    const store = inlineOver(tiers);
    await assert.rejects(store.put(Buffer.alloc(10), { maxBytes: 9 }), { code: 'PAYLOAD_TOO_LARGE' });
    assert.deepEqual(await tiers.blobs.list(), []);
    assert.deepEqual(objectFiles(), []);
  });

  test('inlineMaxBytes 0 is the underlying store itself', () => {
    const tiers = openTiers();
    assert.equal(createInlineArtifactStore({ blobs: tiers.blobs, underlying: tiers.files, maxInlineBytes: 0 }), tiers.files);
  });

  test('verify catches inline bytes damaged in the database at a different size too', async () => {
    const tiers = openTiers();
    const store = inlineOver(tiers);
    const ref = await store.put(Buffer.from('qr image bytes'));
    behindTheStore('UPDATE blobs SET bytes = ? WHERE ref = ?', Buffer.from('shorter'), ref.ref);
    await assert.rejects(store.get(ref.ref, { verify: true }), { code: 'ARTIFACT_CORRUPT' });
  });

  test('content in both tiers (inlineMaxBytes raised) is listed once; remove clears both', async () => {
    const tiers = openTiers();
    const bytes = Buffer.from('kept in both');
    await inlineOver(tiers, 0).put(bytes);
    const store = inlineOver(tiers);
    const ref = await store.put(bytes);
    assert.deepEqual((await collect(store.list())).map((o) => [o.ref, o.size]), [[ref.ref, bytes.byteLength]]);
    assert.equal(await store.remove(ref.ref), true);
    assert.equal(await tiers.files.has(ref.ref), false);
    assert.equal(await tiers.blobs.has(ref.ref), false);
    assert.equal(await store.has(ref.ref), false);
  });

  test('list is the union of both tiers, sorted by ref', async () => {
    const tiers = openTiers();
    const store = inlineOver(tiers);
    const refs = await Promise.all([
      store.put(Buffer.from('a')),
      store.put(Buffer.from('b')),
      store.put(Buffer.alloc(INLINE_MAX * 2, 1)),
      store.put(Buffer.alloc(INLINE_MAX * 3, 2)),
    ]);
    const listed = (await collect(store.list())).map((o) => o.ref);
    assert.deepEqual(listed, refs.map((r) => r.ref).sort());
  });
});

describe('inline artifact store: garbage collection', () => {
  test('GC removes unreferenced objects of both tiers past the grace period and keeps young ones', async () => {
    const tiers = openTiers();
    const store = inlineOver(tiers);
    const oldInline = await store.put(Buffer.from('old inline'));
    const youngInline = await store.put(Buffer.from('young inline'));
    const oldFile = await store.put(Buffer.alloc(INLINE_MAX + 10, 5));
    behindTheStore('UPDATE blobs SET modified_at = modified_at - 7200000 WHERE ref = ?', oldInline.ref);
    const old = new Date(Date.now() - 7_200_000);
    utimesSync(tiers.files.pathOf(oldFile.ref), old, old);
    const report = await collectArtifacts({ store: opened[0]!, artifacts: store, clock: systemClock }, { graceMs: 3_600_000 });
    assert.deepEqual(report.collected.map((o) => o.ref), [oldInline.ref, oldFile.ref].sort());
    assert.equal(report.young, 1);
    assert.deepEqual((await collect(store.list())).map((o) => o.ref), [youngInline.ref]);
  });

  test('GC spares an inline object put again after it was listed (the grace period restarts)', async () => {
    const tiers = openTiers();
    const store: ArtifactStore = inlineOver(tiers);
    const ref = await store.put(Buffer.from('reused'));
    behindTheStore('UPDATE blobs SET modified_at = modified_at - 7200000 WHERE ref = ?', ref.ref);
    const [listed] = await collect(store.list());
    await store.put(Buffer.from('reused'));
    assert.equal(await store.remove(ref.ref, { notModifiedAfter: listed!.modifiedAt }), false);
    assert.equal(await store.has(ref.ref), true);
  });
});

describe('artifacts.inlineMaxBytes in a process', () => {
  /** Opens the runtime of a kiln.yaml with `artifactsYaml` under `artifacts:`, puts `bytes`, and says where they went. */
  async function putThroughRuntime(artifactsYaml: string, bytes: Uint8Array): Promise<{ inline: boolean; files: number }> {
    writeFileSync(join(root, 'kiln.yaml'), `store:\n  path: ./kiln.db\nartifacts:\n  root: ./artifacts\n${artifactsYaml}`);
    const runtime = await openRuntime({ flags: {}, pipelines: [], cwd: root, env: {}, logDestination: new Writable({ write: (_chunk, _enc, done) => done() }) });
    try {
      const { ref } = await runtime.artifacts.put(bytes);
      assert.deepEqual(Buffer.from(await runtime.artifacts.get(ref, { verify: true })), Buffer.from(bytes));
      return { inline: await runtime.store.blobs.has(ref), files: objectFiles().length };
    } finally {
      await runtime.close();
    }
  }

  test('by default (16384) a small buffer is a blob of the store and no file', async () => {
    assert.deepEqual(await putThroughRuntime('', Buffer.alloc(16_384, 1)), { inline: true, files: 0 });
    assert.deepEqual(await putThroughRuntime('', Buffer.alloc(16_385, 2)), { inline: false, files: 1 });
  });

  test('inlineMaxBytes: 0 writes every artifact as a file', async () => {
    assert.deepEqual(await putThroughRuntime('  inlineMaxBytes: 0\n', Buffer.alloc(10, 3)), { inline: false, files: 1 });
  });
});
