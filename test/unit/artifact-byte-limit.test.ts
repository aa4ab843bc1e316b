/**
 * The filesystem artifact store's byte limit (`artifacts.maxBytes`): a write past it fails as a
 * full disk does (ARTIFACTS_UNAVAILABLE, errno ENOSPC, retryable), leaves nothing behind, and
 * writes succeed again once space returns (an object removed here or by another store).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { RESCAN_MIN_INTERVAL_MS } from '../../src/artifacts/byte-limit.ts';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { openRuntime } from '../../src/cli/runtime.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { ArtifactsUnavailableError } from '../../src/core/errors.ts';
import { chunksOf } from '../support/artifact-store-suite.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kiln-artifact-limit-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** `n` bytes unique to `seed`. */
const bytesOf = (n: number, seed: number): Buffer => Buffer.alloc(n, seed % 256).fill(`${seed}:`, 0, Math.min(n, 8));

const temps = (): string[] => {
  try {
    return readdirSync(join(root, 'tmp'));
  } catch {
    return [];
  }
};

/** The error a write past the limit must fail with. */
const full = (err: unknown): boolean => {
  assert.ok(err instanceof ArtifactsUnavailableError, String(err));
  assert.equal(err.code, 'ARTIFACTS_UNAVAILABLE');
  assert.equal(err.retryable, true);
  assert.equal((err.details as { errno?: string }).errno, 'ENOSPC');
  assert.match(err.message, /artifacts\.maxBytes/);
  return true;
};

describe('fs artifact store byte limit', () => {
  test('a buffer past the limit fails like a full disk, leaves no file, and fits again once an object is removed', async () => {
    const store = createFsArtifactStore({ root, maxBytes: 10_000 });
    const a = await store.put(bytesOf(6_000, 1));
    await store.put(bytesOf(3_000, 2));
    await assert.rejects(store.put(bytesOf(2_000, 3)), full);
    assert.deepEqual(temps(), []);
    // The same content again needs no room.
    assert.deepEqual(await store.put(bytesOf(6_000, 1)), a);
    // The probe write of /healthz needs a block (4 KiB), as on a real disk: 1,000 bytes left are not enough.
    await assert.rejects(store.checkWritable!(), full);
    assert.equal(await store.remove(a.ref), true);
    await store.checkWritable!();
    await store.put(bytesOf(2_000, 3));
  });

  test('a stream past the limit fails part way, keeps no temp file and gives its reserved bytes back', async () => {
    const store = createFsArtifactStore({ root, maxBytes: 1_000 });
    await assert.rejects(store.put(chunksOf('x'.repeat(400), 'y'.repeat(400), 'z'.repeat(400))), full);
    assert.deepEqual(temps(), []);
    const ref = await store.put(chunksOf('x'.repeat(500), 'y'.repeat(500)));
    assert.equal(ref.size, 1_000);
    await assert.rejects(store.put(chunksOf('!')), full);
  });

  test('concurrent writes reserve their bytes: of ten 200-byte puts under a 1,000-byte limit exactly five succeed', async () => {
    const store = createFsArtifactStore({ root, maxBytes: 1_000 });
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.put(i % 2 ? bytesOf(200, i) : chunksOf(bytesOf(200, i).toString('latin1')))));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5);
    for (const r of results) if (r.status === 'rejected') full(r.reason);
    assert.deepEqual(temps(), []);
  });

  test('objects already on disk count (one walk at the first write), and space another store frees is seen at the next refused write', async () => {
    const clock = createFakeClock();
    const writer = createFsArtifactStore({ root });
    const big = await writer.put(bytesOf(900, 1));
    const limited = createFsArtifactStore({ root, maxBytes: 1_000, clock });
    await assert.rejects(limited.put(bytesOf(200, 2)), full);
    // Another process's garbage collection frees the space; this store's count is stale until it walks again.
    assert.equal(await writer.remove(big.ref), true);
    clock.set(clock.now() + RESCAN_MIN_INTERVAL_MS);
    await limited.put(bytesOf(200, 2));
  });
});

describe('artifacts.maxBytes in a process', () => {
  test('kiln.yaml\'s limit reaches the artifact store the runtime opens', async () => {
    // Inline artifacts off: the limit is the file store's, and these buffers would be inline.
    writeFileSync(join(root, 'kiln.yaml'), 'store:\n  path: ./kiln.db\nartifacts:\n  root: ./artifacts\n  maxBytes: 4096\n  inlineMaxBytes: 0\n');
    const runtime = await openRuntime({ flags: {}, pipelines: [], cwd: root, env: {}, logDestination: new Writable({ write: (_chunk, _enc, done) => done() }) });
    try {
      await runtime.artifacts.put(bytesOf(4_000, 1));
      await assert.rejects(runtime.artifacts.put(bytesOf(200, 2)), full);
    } finally {
      await runtime.close();
    }
  });
});
