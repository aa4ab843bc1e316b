/**
 * A full or read-only artifact disk, made for real: a tiny tmpfs mounted over the harness's
 * artifact directory, filled up (ENOSPC), then remounted read-only (EROFS). Mounting needs root
 * with CAP_SYS_ADMIN (a root process ignores chmod, so a 0555 directory proves nothing there);
 * without it that suite is skipped with the reason. The same full-disk checks run everywhere on
 * the byte limit of the filesystem store (`artifacts.maxBytes`), filled by one large object.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { fsArtifactsLimited } from '../support/artifact-cases.ts';
import { openHttpHarness, type HttpHarness } from './http-harness.ts';

function mountSkipReason(): string | undefined {
  const probe = mkdtempSync(join(tmpdir(), 'kiln-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)';
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="red"/></svg>');

/** Writes `path` until the filesystem is full. */
async function fill(path: string): Promise<void> {
  const file = await open(path, 'w');
  try {
    const block = Buffer.alloc(4096, 1);
    for (;;) await file.write(block);
  } catch (err) {
    assert.equal((err as { code?: string }).code, 'ENOSPC');
  } finally {
    await file.close();
  }
}

const FULL_DISK_TEST = 'a full disk: PUT is 503 ARTIFACTS_UNAVAILABLE with Retry-After, no temp file left, and /healthz is not ok until space returns';

/** How one suite makes its disk full and frees it again. */
interface DiskFiller {
  fill(): Promise<void>;
  free(): Promise<void>;
  /** The temp files left under the artifact directory. */
  temps(): Promise<string[]>;
}

async function fullDiskChecks(h: HttpHarness, disk: DiskFiller): Promise<void> {
  const ok = await h.app.inject({ method: 'PUT', url: '/v1/assets/d1', payload: SVG, headers: { 'content-type': 'image/svg+xml' } });
  assert.equal(ok.statusCode, 202, ok.body);
  await disk.fill();
  const full = await h.app.inject({ method: 'PUT', url: '/v1/assets/d2', payload: Buffer.concat([SVG, Buffer.from('<!-- other -->')]), headers: { 'content-type': 'image/svg+xml' } });
  assert.equal(full.statusCode, 503, full.body);
  assert.equal(full.json<{ code: string }>().code, 'ARTIFACTS_UNAVAILABLE');
  assert.ok(Number(full.headers['retry-after']) >= 1, 'Retry-After');
  assert.deepEqual(await disk.temps(), []);
  const boundary = 'kiln-disk-boundary';
  const form = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.svg"\r\nContent-Type: image/svg+xml\r\n\r\n`),
    SVG,
    Buffer.from(`<!-- form -->\r\n--${boundary}--\r\n`),
  ]);
  const multipart = await h.app.inject({ method: 'PUT', url: '/v1/assets/d2', payload: form, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
  assert.equal(multipart.statusCode, 503, multipart.body);
  assert.equal(multipart.json<{ code: string }>().code, 'ARTIFACTS_UNAVAILABLE');
  assert.deepEqual(await disk.temps(), []);
  const health = await h.app.inject({ method: 'GET', url: '/healthz' });
  assert.equal(health.statusCode, 503, health.body);
  assert.equal(health.json<{ code: string }>().code, 'ARTIFACTS_UNAVAILABLE');
  assert.ok(Number(health.headers['retry-after']) >= 1, 'Retry-After');
  await disk.free();
  // The probe's answer is reused for 2 s; past that, a disk with room is healthy again.
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  const healthy = await h.app.inject({ method: 'GET', url: '/healthz' });
  assert.equal(healthy.statusCode, 200, healthy.body);
  assert.equal(healthy.json<{ artifacts: string }>().artifacts, 'ok');
  const again = await h.app.inject({ method: 'PUT', url: '/v1/assets/d2', payload: form, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
  assert.equal(again.statusCode, 202, again.body);
}

describe('asset PUT and /healthz when the artifact disk is full or read-only', { skip: mountSkipReason() }, () => {
  let h: HttpHarness;
  let mountPoint: string;
  before(async () => {
    h = await openHttpHarness((dir) => createSqliteStore({ path: join(dir, 'kiln.db') }));
    mountPoint = join(h.dir, 'artifacts');
    mkdirSync(mountPoint, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mountPoint]);
  });
  after(async () => {
    execFileSync('umount', [mountPoint]);
    await h.close();
  });

  const temps = async () => (await readdir(join(mountPoint, 'tmp')).catch(() => [])).filter((n) => n.endsWith('.tmp'));

  test(FULL_DISK_TEST, () => fullDiskChecks(h, { temps, fill: () => fill(join(mountPoint, 'filler')), free: () => rm(join(mountPoint, 'filler')) }));

  test('a read-only disk: PUT is 503 ARTIFACTS_UNAVAILABLE', async () => {
    execFileSync('mount', ['-o', 'remount,ro', mountPoint]);
    try {
      const res = await h.app.inject({ method: 'PUT', url: '/v1/assets/d3', payload: Buffer.concat([SVG, Buffer.from('<!-- ro -->')]), headers: { 'content-type': 'image/svg+xml' } });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json<{ code: string }>().code, 'ARTIFACTS_UNAVAILABLE');
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', mountPoint]);
    }
  });
});

/** The byte limit: room for the small SVGs, then one object takes (nearly) all of it. */
const LIMIT = 256 * 1024;

describe('asset PUT and /healthz when the artifact byte limit (artifacts.maxBytes) is reached', () => {
  let h: HttpHarness;
  before(async () => {
    h = await openHttpHarness((dir) => ({ store: createSqliteStore({ path: join(dir, 'kiln.db') }), destroy: async () => {}, artifacts: fsArtifactsLimited(LIMIT) }));
  });
  after(() => h.close());
  let filler: string | undefined;
  test(FULL_DISK_TEST, () =>
    fullDiskChecks(h, {
      temps: async () => (await readdir(join(h.dir, 'artifacts', 'tmp')).catch(() => [])).filter((n) => n.endsWith('.tmp')),
      fill: async () => {
        // Everything but 16 bytes: less than any upload here, and than the health probe's block.
        let stored = 0;
        for await (const object of h.kiln.artifacts.list()) stored += object.size;
        filler = (await h.kiln.artifacts.put(Buffer.alloc(LIMIT - stored - 16, 7))).ref;
      },
      free: async () => {
        assert.equal(await h.kiln.artifacts.remove(filler!), true);
      },
    }),
  );
});
