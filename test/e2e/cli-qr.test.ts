/**
 * `kiln qr` as a real process on the embedded store with no server running: the image decodes to
 * the text, the format follows `-o`'s extension, a repeat is byte-identical, and bad options exit
 * with a clear message and the validation exit code without writing a file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { decodeQr } from '../support/qr-decode.ts';
import { runKiln } from './kiln-process.ts';

const E2E_TIMEOUT_MS = 60_000;

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-cli-qr-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('kiln qr writes a PNG or SVG that decodes to the text, with no server running', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  const png = await runKiln(['qr', 'héllo kiln', '-o', 'out.png', '--ecc', 'H', '--margin', '2', '--db', 'qr.db'], dir);
  assert.equal(png.code, 0, png.stderr);
  const pngBytes = new Uint8Array(await readFile(join(dir, 'out.png')));
  assert.deepEqual(await decodeQr(pngBytes, 'image/png'), ['héllo kiln']);

  const svg = await runKiln(['qr', 'héllo kiln', '-o', 'out.svg', '--fg', '#123', '--bg', '#fff', '--db', 'qr.db'], dir);
  assert.equal(svg.code, 0, svg.stderr);
  const svgBytes = new Uint8Array(await readFile(join(dir, 'out.svg')));
  assert.match(Buffer.from(svgBytes).toString('utf8'), /^<svg /);
  assert.deepEqual(await decodeQr(svgBytes, 'image/svg+xml'), ['héllo kiln']);

  const again = await runKiln(['qr', 'héllo kiln', '-o', 'again.png', '--ecc', 'h', '--margin', '2', '--db', 'qr.db'], dir);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(new Uint8Array(await readFile(join(dir, 'again.png'))), pngBytes);
});

test('kiln qr rejects bad options with a message and the validation exit code, writing nothing', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await tempDir(t);
  const bad = await runKiln(['qr', 'x', '-o', 'bad.png', '--size', '12abc', '--db', 'qr.db'], dir);
  assert.equal(bad.code, ExitCode.usage, bad.stderr);
  assert.match(bad.stderr, /VALIDATION_FAILED.*size/);
  const long = await runKiln(['qr', 'x'.repeat(1274), '-o', 'long.png', '--ecc', 'H', '--db', 'qr.db'], dir);
  assert.notEqual(long.code, 0);
  assert.match(long.stderr, /QR_CONTENT_TOO_LONG.*1273/);
  await assert.rejects(stat(join(dir, 'bad.png')));
  await assert.rejects(stat(join(dir, 'long.png')));
});
