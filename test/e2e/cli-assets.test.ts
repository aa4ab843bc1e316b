/**
 * `kiln assets add|get|show` as real processes on an SQLite file with no server running: a glob of
 * real images (PNG, JPEG with EXIF orientation 6, SVG) and one text file named .png is added in one
 * command; the bad file fails with its code without disturbing the others and makes the command
 * exit 1; the published bytes written by `assets get` decode with the right format and dimensions;
 * `--id-from hash` ids are stable, and files sharing an id become successive versions.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { orientedJpeg, ORIENTED_PICTURE, simpleSvg, solidImage, textFile } from '../support/asset-fixtures.ts';
import { runKiln } from './kiln-process.ts';

const E2E_TIMEOUT_MS = 120_000;
const COMMAND_TIMEOUT_MS = 60_000;
/** A permanently failed run ends `failed` (or `dead_lettered`, where permanent failures still end there). */
const FAILED_STATUS = /^(failed|dead_lettered)$/;

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-cli-assets-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** `kiln <args> --db assets.db` in `dir`, quiet logs. */
function kiln(dir: string, args: readonly string[]): ReturnType<typeof runKiln> {
  return runKiln([...args, '--db', 'assets.db', '--log-level', 'warn'], dir, undefined, COMMAND_TIMEOUT_MS);
}

/** The summary table's rows by file: [asset id, version, status, published / error]. */
function summaryRows(stdout: string): Map<string, string[]> {
  const lines = stdout.split('\n');
  const header = lines.findIndex((l) => l.startsWith('FILE '));
  assert.notEqual(header, -1, `no summary table in:\n${stdout}`);
  const rows = new Map<string, string[]>();
  for (const line of lines.slice(header + 1)) {
    if (line.trim() === '') break;
    const [file = '', id = '', version = '', status = '', ...rest] = line.split(/\s{2,}/);
    rows.set(file, [id, version, status, rest.join('  ')]);
  }
  return rows;
}

async function writeInputs(dir: string): Promise<void> {
  await mkdir(join(dir, 'in', 'nested'), { recursive: true });
  await writeFile(join(dir, 'in', 'Café photo (1).png'), await solidImage('png', '#3366cc', 640, 480));
  await writeFile(join(dir, 'in', 'nested', 'rotated.jpg'), await orientedJpeg(6));
  await writeFile(join(dir, 'in', 'logo.svg'), simpleSvg());
  await writeFile(join(dir, 'in', 'notes.png'), textFile());
  // Hidden, so the glob skips it (as a shell would).
  await writeFile(join(dir, 'in', '.hidden.png'), textFile());
}

test('kiln assets add renders a glob of images with an in-process worker, fails only the bad file, and exits 1', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  await writeInputs(dir);

  const added = await kiln(dir, ['assets', 'add', 'in/**/*']);
  assert.equal(added.code, ExitCode.failure, added.stderr);
  const rows = summaryRows(added.stdout);
  assert.deepEqual([...rows.keys()].sort(), ['in/Café photo (1).png', 'in/logo.svg', 'in/nested/rotated.jpg', 'in/notes.png']);
  assert.deepEqual(rows.get('in/Café photo (1).png'), ['Cafe-photo-1', '1', 'succeeded', 'large, preview, thumb']);
  assert.deepEqual(rows.get('in/nested/rotated.jpg'), ['rotated', '1', 'succeeded', 'large, preview, thumb']);
  assert.deepEqual(rows.get('in/logo.svg'), ['logo', '1', 'succeeded', 'large, preview, thumb']);
  const [badId, badVersion, badStatus = '', badResult = ''] = rows.get('in/notes.png') ?? [];
  assert.deepEqual([badId, badVersion], ['notes', '1']);
  assert.match(badStatus, FAILED_STATUS);
  assert.match(badResult, /^ASSET_UNSUPPORTED_FORMAT: /);
  assert.match(added.stdout, /^4 files: .*3 succeeded/m);
  // stderr is not a terminal here: one line per finished file instead of bars.
  assert.equal(added.stderr.match(/^\[\d\/4\] /gm)?.length, 4, added.stderr);

  const out = join(dir, 'rotated-preview.webp');
  const got = await kiln(dir, ['assets', 'get', 'rotated', 'preview', '-o', out]);
  assert.equal(got.code, 0, got.stderr);
  // EXIF orientation 6 applied: the upright picture is landscape, and 96 px fits in preview's 512 unscaled.
  assert.deepEqual(await dimensions(out), { format: 'webp', width: ORIENTED_PICTURE.width, height: ORIENTED_PICTURE.height });
  const thumb = join(dir, 'photo-thumb.png');
  assert.equal((await kiln(dir, ['assets', 'get', 'Cafe-photo-1', 'thumb', '-o', thumb])).code, 0);
  assert.deepEqual(await dimensions(thumb), { format: 'png', width: 128, height: 96 });
  const svgThumb = join(dir, 'logo-thumb.png');
  assert.equal((await kiln(dir, ['assets', 'get', 'logo', 'thumb', '-o', svgThumb])).code, 0);
  assert.deepEqual(await dimensions(svgThumb), { format: 'png', width: 128, height: 64 });

  const shown = await kiln(dir, ['assets', 'show', 'notes', '--json']);
  assert.equal(shown.code, 0, shown.stderr);
  const view = JSON.parse(shown.stdout) as { versions: { status: string; error: { code: string } }[]; publications: object };
  assert.match(view.versions[0]?.status ?? '', FAILED_STATUS);
  assert.equal(view.versions[0]?.error.code, 'ASSET_UNSUPPORTED_FORMAT');
  assert.deepEqual(view.publications, {});
});

test('kiln assets get exits 3 with a clear message when nothing is published; add refuses unmatched globs and unknown profiles up front', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'in'));
  await writeFile(join(dir, 'in', 'small.png'), await solidImage('png', '#22aa44', 200, 100));
  const added = await kiln(dir, ['assets', 'add', 'in/small.png', '--profile', 'thumb']);
  assert.equal(added.code, 0, added.stderr);
  assert.deepEqual(summaryRows(added.stdout).get('in/small.png'), ['small', '1', 'succeeded', 'thumb']);

  const noProfile = await kiln(dir, ['assets', 'get', 'small', 'preview', '-o', 'x.webp']);
  assert.equal(noProfile.code, ExitCode.notFound);
  assert.match(noProfile.stderr, /NOT_FOUND: asset small has no published preview output \(published: thumb/);
  const noAsset = await kiln(dir, ['assets', 'get', 'missing', 'thumb', '-o', 'x.png']);
  assert.equal(noAsset.code, ExitCode.notFound);
  assert.match(noAsset.stderr, /NOT_FOUND: no asset missing in this store/);
  await assert.rejects(stat(join(dir, 'x.webp')));
  await assert.rejects(stat(join(dir, 'x.png')));
  const noMatch = await kiln(dir, ['assets', 'add', 'in/small.png', 'in/*.jpg']);
  assert.equal(noMatch.code, ExitCode.usage);
  assert.match(noMatch.stderr, /VALIDATION_FAILED: nothing added: in\/\*\.jpg matches no file/);
  const unknownProfile = await kiln(dir, ['assets', 'add', 'in/small.png', '--profiles', 'thumb,huge']);
  assert.equal(unknownProfile.code, ExitCode.usage);
  assert.match(unknownProfile.stderr, /VALIDATION_FAILED: unknown profile huge \(configured: thumb, preview, large\)/);
});

test('kiln assets --tenant acts on that tenant\'s assets: the same id without a tenant (or of another tenant) is another asset', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'in'));
  await writeFile(join(dir, 'in', 'logo.png'), await solidImage('png', '#22aa44', 200, 100));
  const added = await kiln(dir, ['assets', 'add', 'in/logo.png', '--profile', 'thumb', '--tenant', 'acme']);
  assert.equal(added.code, 0, added.stderr);
  assert.deepEqual(summaryRows(added.stdout).get('in/logo.png'), ['logo', '1', 'succeeded', 'thumb']);
  const again = await kiln(dir, ['assets', 'add', 'in/logo.png', '--profile', 'thumb']);
  assert.deepEqual(summaryRows(again.stdout).get('in/logo.png'), ['logo', '1', 'succeeded', 'thumb'], 'without a tenant: another logo, its own version 1');

  const shown = await kiln(dir, ['assets', 'show', 'logo', '--json', '--tenant', 'acme']);
  assert.equal(shown.code, 0, shown.stderr);
  const view = JSON.parse(shown.stdout) as { asset_id: string; versions: { run_id: string }[] };
  assert.equal(view.asset_id, 'logo');
  assert.equal(view.versions.length, 1);
  const plain = JSON.parse((await kiln(dir, ['assets', 'show', 'logo', '--json'])).stdout) as { versions: { run_id: string }[] };
  assert.notEqual(plain.versions[0]?.run_id, view.versions[0]?.run_id, 'two assets, two runs');
  assert.equal((await kiln(dir, ['assets', 'get', 'logo', 'thumb', '-o', 'acme.png', '--tenant', 'acme'])).code, 0);
  const other = await kiln(dir, ['assets', 'get', 'logo', 'thumb', '-o', 'x.png', '--tenant', 'globex']);
  assert.equal(other.code, ExitCode.notFound);
  assert.match(other.stderr, /NOT_FOUND: no asset logo in this store/);
  const bad = await kiln(dir, ['assets', 'show', 'logo', '--tenant', 'acme/eu']);
  assert.equal(bad.code, ExitCode.usage);
  assert.match(bad.stderr, /VALIDATION_FAILED: --tenant cannot contain "\/"/);
});

test('kiln assets add --id-from hash gives the same id on every run; files sharing an id become versions 1 and 2', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'a'));
  await mkdir(join(dir, 'b'));
  const bytes = await solidImage('png', '#aa3366', 300, 150);
  await writeFile(join(dir, 'a', 'one.png'), bytes);
  await writeFile(join(dir, 'b', 'two.png'), bytes);
  const id = createHash('sha256').update(bytes).digest('hex').slice(0, 16);

  const first = await kiln(dir, ['assets', 'add', 'a/one.png', 'b/two.png', '--id-from', 'hash', '--profile', 'thumb']);
  assert.equal(first.code, 0, first.stderr);
  const rows = summaryRows(first.stdout);
  assert.deepEqual(rows.get('a/one.png')?.slice(0, 3), [id, '1', 'superseded']);
  assert.deepEqual(rows.get('b/two.png'), [id, '2', 'succeeded', 'thumb']);
  assert.match(first.stdout, new RegExp(`note: 2 files map to asset id ${id} .*a/one\\.png = v1, b/two\\.png = v2`));

  const again = await kiln(dir, ['assets', 'add', 'a/*.png', '--id-from', 'hash', '--profile', 'thumb', '--json']);
  assert.equal(again.code, 0, again.stderr);
  const lines = again.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(lines.map((l) => [l['file'], l['asset_id'], l['version'], l['status'], l['published']]), [['a/one.png', id, 3, 'succeeded', ['thumb']]]);
  const got = await kiln(dir, ['assets', 'get', id, 'thumb', '-o', 'out.png']);
  assert.equal(got.code, 0, got.stderr);
  assert.deepEqual(await dimensions(join(dir, 'out.png')), { format: 'png', width: 128, height: 64 });
});

async function dimensions(path: string): Promise<{ format: string | undefined; width: number | undefined; height: number | undefined }> {
  const { format, width, height } = await sharp(await readFile(path)).metadata();
  return { format, width, height };
}
