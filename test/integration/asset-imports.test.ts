/**
 * `import:<relative path>` sources of the thumbnails pipeline, end to end in one process (SQLite
 * file, filesystem artifacts, a real worker): a file under a configured import root is ingested and
 * published; a path that escapes the root (`..`, or a symlink pointing outside) ends the run
 * `failed` with ASSET_IMPORT_FORBIDDEN and publishes nothing.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { Kiln, Worker } from '../../src/engine/kiln-types.ts';
import { createAssetService, type AssetService } from '../../src/pipelines/thumbnails/asset-service.ts';
import { thumbnailsPipeline } from '../../src/pipelines/thumbnails/pipeline.ts';
import { photoJpeg } from '../support/asset-fixtures.ts';

describe('thumbnails imports from configured roots', () => {
  let dir: string;
  let store: Store;
  let kiln: Kiln;
  let worker: Worker;
  let assets: AssetService;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-imports-'));
    const root = join(dir, 'root');
    await mkdir(join(root, 'photos'), { recursive: true });
    await writeFile(join(root, 'photos', 'cat.jpg'), await photoJpeg(300, 200));
    await writeFile(join(dir, 'outside.png'), await sharp({ create: { width: 10, height: 10, channels: 3, background: '#f00' } }).png().toBuffer());
    await symlink(join(dir, 'outside.png'), join(root, 'photos', 'escape.png'));
    store = createSqliteStore({ path: join(dir, 'kiln.db') });
    await store.migrate();
    kiln = createKiln({
      store,
      artifacts: createFsArtifactStore({ root: join(dir, 'artifacts') }),
      pipelines: [thumbnailsPipeline],
      settings: { thumbnails: { importRoots: [root], profiles: { thumb: { maxSidePx: 64, format: 'png' } } } },
    });
    worker = kiln.createWorker({ pollMs: 10 });
    worker.start();
    assets = createAssetService(kiln);
  });

  after(async () => {
    await worker.stop(1_000);
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a file under a root is ingested and published', async () => {
    const started = await assets.importFrom('cat', 'import:photos/cat.jpg');
    const { run } = await kiln.waitForRun(started.run.id, { timeoutMs: 20_000 });
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    const { bytes } = await assets.read('cat', 'thumb');
    const meta = await sharp(bytes).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['png', 64, 43]);
  });

  for (const [name, source] of [
    ['a .. segment', 'import:../outside.png'],
    ['an absolute path', `import:${'/etc/passwd'}`],
    ['a symlink that leaves the root', 'import:photos/escape.png'],
  ] as const) {
    test(`${name} ends the run failed with ASSET_IMPORT_FORBIDDEN and publishes nothing`, async () => {
      const id = `bad-${name.replace(/[^a-z]+/g, '-')}`.replace(/-+$/, '');
      const started = await assets.importFrom(id, source);
      const { run } = await kiln.waitForRun(started.run.id, { timeoutMs: 20_000 });
      assert.equal(run.status, 'failed');
      assert.equal((run.error as { code?: string } | null)?.code, 'ASSET_IMPORT_FORBIDDEN');
      assert.deepEqual(await kiln.listPublications(id), []);
    });
  }
});
