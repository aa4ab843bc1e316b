import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Resvg } from '@resvg/resvg-js';
import { StageFailure, ValidationError } from '../../../src/index.ts';
import { normalizeImage } from '../../../src/pipelines/thumbnails/media/normalize.ts';
import { inspectAsset } from '../../../src/pipelines/thumbnails/media/sniff.ts';
import { bundledFontFiles, measureSvg, renderSvg, renderSvgStoppable } from '../../../src/pipelines/thumbnails/media/svg-render.ts';
import { decodePixels, hostileSvg, isNear, SECRET_COLOR, simpleSvg, writeSecretPng } from '../../support/asset-fixtures.ts';

function svgOf(body: string, width = 200, height = 100): Buffer {
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${body}</svg>`);
}

describe('renderSvg', () => {
  test('fits the longer side to maxSidePx, keeping the aspect ratio', async () => {
    assert.deepEqual(pick(renderSvg(svgOf('', 200, 100), 50)), [50, 25]);
    assert.deepEqual(pick(renderSvg(svgOf('', 100, 200), 50)), [25, 50]);
    assert.deepEqual(pick(renderSvg(svgOf('', 10, 10), 64)), [64, 64], 'vector drawings are scaled up');
    const rendered = renderSvg(simpleSvg(), 400);
    const pixels = await decodePixels(rendered.png);
    assert.deepEqual([pixels.width, pixels.height, pixels.channels], [400, 200, 4]);
    assert.ok(isNear(pixels.at(50, 100), [255, 0, 0]), 'the red rectangle fills the left half');
    assert.equal(pixels.at(390, 5)[3], 0, 'the rest is transparent');
  });

  test('text is set with the bundled DejaVu fonts, whatever family the SVG asks for', async () => {
    assert.ok(bundledFontFiles().some((f) => basename(f) === 'DejaVuSans.ttf'));
    assert.ok(bundledFontFiles().every((f) => /^DejaVuSans.*\.ttf$/.test(basename(f))));
    const text = (family: string): Buffer => svgOf(`<text x="10" y="70" font-size="60" font-family="${family}">Kiln</text>`);
    const dejavu = renderSvg(text('DejaVu Sans'), 200);
    const inked = await decodePixels(dejavu.png);
    let opaque = 0;
    for (let y = 0; y < inked.height; y++) for (let x = 0; x < inked.width; x++) if ((inked.at(x, y)[3] ?? 0) > 128) opaque++;
    assert.ok(opaque > 500, `glyphs were drawn (${opaque} opaque pixels)`);
    assert.deepEqual(Buffer.from(renderSvg(text('Arial, Helvetica'), 200).png), Buffer.from(dejavu.png), 'unknown families fall back to DejaVu Sans');
    assert.deepEqual(Buffer.from(renderSvg(text('sans-serif'), 200).png), Buffer.from(dejavu.png));
  });

  test('is deterministic, and the render in a child process gives the same bytes', async () => {
    const a = renderSvg(simpleSvg(), 256);
    const b = renderSvg(simpleSvg(), 256);
    assert.deepEqual(Buffer.from(a.png), Buffer.from(b.png));
    const c = await renderSvgStoppable(simpleSvg(), 256, { budgetMs: 30_000 });
    assert.deepEqual(Buffer.from(c.png), Buffer.from(a.png));
  });

  test('refuses bad sizes: a zero-size SVG is ASSET_UNREADABLE, a bad maxSidePx a ValidationError', () => {
    assert.throws(() => renderSvg(svgOf('', 0, 10), 64), (e: unknown) => e instanceof StageFailure && e.code === 'ASSET_UNREADABLE' && e.errorClass === 'permanent');
    for (const side of [0, -1, 1.5, 100_000]) assert.throws(() => renderSvg(simpleSvg(), side), ValidationError, String(side));
    assert.deepEqual(measureSvg(simpleSvg()), { width: 200, height: 100 });
  });

  test('sanitizes its input itself: a DOCTYPE is refused', () => {
    assert.throws(
      () => renderSvg(Buffer.from('<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>'), 64),
      (e: unknown) => e instanceof StageFailure && e.details?.['reason'] === 'doctype',
    );
  });
});

function pick(rendered: { width: number; height: number }): [number, number] {
  return [rendered.width, rendered.height];
}

describe('a hostile SVG (script, remote href, local file href)', () => {
  let dir: string;
  let secretPath: string;
  let server: Server;
  let remoteUrl: string;
  let connections = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-svg-'));
    secretPath = await writeSecretPng(dir);
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address && typeof address === 'object');
    remoteUrl = `http://127.0.0.1:${address.port}`;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  test('the fixture is a real threat: rendered unsanitized, resvg shows the local file', async () => {
    const raw = new Resvg(hostileSvg({ remoteUrl, localPath: secretPath }), { font: { loadSystemFonts: false } }).render();
    const pixels = await decodePixels(raw.asPng());
    assert.ok(pixels.contains(SECRET_COLOR, 2), 'without the sanitizer the secret pixels appear');
  });

  test('renders without the local file pixels and without any connection attempt', async () => {
    const svg = hostileSvg({ remoteUrl, localPath: secretPath });
    const direct = await decodePixels(renderSvg(svg, 200).png);
    assert.equal(direct.contains(SECRET_COLOR, 24), false, 'the local file never appears');
    assert.ok(isNear(direct.at(10, 10), [0, 0, 255]), 'the safe part (blue square) is rendered');
    assert.equal(direct.at(150, 150)[3], 0, 'nothing covers the canvas');

    const info = await inspectAsset(svg, { maxBytes: 1 << 20, maxPixels: 1e8, totalBytes: svg.byteLength });
    const normalized = await normalizeImage(svg, info, { maxPixels: 1e8 });
    assert.equal((await decodePixels(normalized.bytes)).contains(SECRET_COLOR, 24), false);

    // Give a (hypothetical) asynchronous fetch a chance to reach the server before counting.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(connections, 0, 'no connection was attempted');
  });
});
