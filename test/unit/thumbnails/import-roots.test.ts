import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { StageFailure } from '../../../src/index.ts';
import { resolveImport } from '../../../src/pipelines/thumbnails/media/import-roots.ts';

describe('resolveImport', () => {
  let base: string;
  let rootA: string;
  let rootB: string;
  let outside: string;

  before(async () => {
    // realpath: on some systems tmpdir() itself is a symlink (macOS /var -> /private/var).
    base = await realpath(await mkdtemp(join(tmpdir(), 'kiln-import-')));
    rootA = join(base, 'a');
    rootB = join(base, 'b');
    outside = join(base, 'outside');
    for (const dir of [rootA, join(rootA, 'sub'), rootB, outside]) await mkdir(dir, { recursive: true });
    await writeFile(join(rootA, 'a.png'), 'a');
    await writeFile(join(rootA, 'sub', 'b.png'), 'b');
    await writeFile(join(rootB, 'c.png'), 'c');
    await writeFile(join(outside, 'secret.png'), 'secret');
    await symlink(join(rootA, 'sub', 'b.png'), join(rootA, 'link-in'));
    await symlink(join(outside, 'secret.png'), join(rootA, 'link-out'));
    await symlink('../outside', join(rootA, 'dir-out'));
    await symlink(join(rootB, 'c.png'), join(rootA, 'link-to-b'));
    await symlink(join(rootA, 'loop2'), join(rootA, 'loop1'));
    await symlink(join(rootA, 'loop1'), join(rootA, 'loop2'));
    await symlink(rootA, join(base, 'root-link'));
  });

  after(async () => {
    await rm(base, { recursive: true, force: true });
  });

  async function refused(source: string, roots: readonly string[], code = 'ASSET_IMPORT_FORBIDDEN'): Promise<void> {
    const err = await resolveImport(source, roots).then(
      (path) => assert.fail(`${JSON.stringify(source)} resolved to ${path}`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof StageFailure, `${source}: ${String(err)}`);
    assert.equal(err.code, code, `${JSON.stringify(source)}: ${err.message}`);
    assert.equal(err.errorClass, 'permanent');
  }

  test('returns the real path of a file under a root', async () => {
    assert.equal(await resolveImport('import:a.png', [rootA]), join(rootA, 'a.png'));
    assert.equal(await resolveImport('import:sub/b.png', [rootA]), join(rootA, 'sub', 'b.png'));
    assert.equal(await resolveImport('import:./sub//b.png', [rootA]), join(rootA, 'sub', 'b.png'));
    assert.equal(await resolveImport('import:c.png', [rootA, rootB]), join(rootB, 'c.png'), 'roots are tried in order');
  });

  test('follows symlinks that stay inside a root (the root itself may be one)', async () => {
    assert.equal(await resolveImport('import:link-in', [rootA]), join(rootA, 'sub', 'b.png'));
    assert.equal(await resolveImport('import:a.png', [join(base, 'root-link')]), join(rootA, 'a.png'));
    assert.equal(await resolveImport('import:link-to-b', [rootA, rootB]), join(rootB, 'c.png'), 'inside another configured root');
  });

  test('refuses symlinks that escape every root', async () => {
    await refused('import:link-out', [rootA]);
    await refused('import:dir-out/secret.png', [rootA]);
    await refused('import:link-to-b', [rootA]);
    await refused('import:loop1', [rootA]);
  });

  test('refuses .. segments, absolute paths, empty paths, NUL and other schemes', async () => {
    for (const source of ['import:../outside/secret.png', 'import:sub/../../outside/secret.png', 'import:sub/..', 'import:..', 'import:..\\outside\\secret.png']) {
      await refused(source, [rootA]);
    }
    for (const source of [`import:${join(rootA, 'a.png')}`, 'import:/etc/passwd', 'import:C:\\Windows\\win.ini', 'import:c:relative', 'import:\\\\server\\share\\x']) {
      await refused(source, [rootA]);
    }
    await refused('import:', [rootA]);
    await refused('import:a.png\0.jpg', [rootA]);
    await refused('a.png', [rootA]);
    await refused('file:a.png', [rootA]);
  });

  test('refuses directories and answers ASSET_IMPORT_NOT_FOUND for missing files', async () => {
    await refused('import:sub', [rootA]);
    await refused('import:missing.png', [rootA, rootB], 'ASSET_IMPORT_NOT_FOUND');
    await refused('import:a.png/x', [rootA], 'ASSET_IMPORT_NOT_FOUND');
    await refused('import:a.png', [join(base, 'no-such-root')], 'ASSET_IMPORT_NOT_FOUND');
  });

  test('refuses everything when no root is configured', async () => {
    await refused('import:a.png', []);
  });
});
