import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Resvg } from '@resvg/resvg-js';
import { encodeQrMatrix } from '../../../src/pipelines/qr-code/matrix.ts';
import { parseQrRequest } from '../../../src/pipelines/qr-code/options.ts';
import { renderQr } from '../../../src/pipelines/qr-code/render.ts';

function svgOf(raw: Record<string, unknown>): string {
  const image = renderQr(parseQrRequest({ content: 'x', format: 'svg', ...raw }, 'json'));
  assert.equal(image.mediaType, 'image/svg+xml');
  return Buffer.from(image.bytes).toString('utf8');
}

function count(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].length;
}

describe('QR SVG', () => {
  test('has the PNG pixel size as width/height and a viewBox counted in modules', () => {
    // "x" is version 1: 21 modules, plus 2 x 4 margin = 29.
    const svg = svgOf({ size: 333 });
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="333" height="333" viewBox="0 0 29 29" shape-rendering="crispEdges">/);
    assert.match(svgOf({ scale: 5, margin: 1 }), / width="115" height="115" viewBox="0 0 23 23"/);
  });

  test('draws all dark modules in one path over one background rect', () => {
    const svg = svgOf({});
    assert.equal(count(svg, /<path /g), 1);
    assert.equal(count(svg, /<rect /g), 1);
    assert.match(svg, /<rect width="29" height="29" fill="#ffffff"\/><path fill="#000000" d="M4 4h7v1h-7z/);
    assert.ok(svg.endsWith('</svg>\n'));
  });

  test('leaves the background rect out when the background is fully transparent', () => {
    assert.equal(count(svgOf({ bg: '#12345600' }), /<rect /g), 0);
  });

  test('writes translucent colors as fill plus fill-opacity, opaque ones as fill only', () => {
    const svg = svgOf({ fg: '#1D355780', bg: '#f1faeeCC' });
    assert.match(svg, /<rect [^>]*fill="#f1faee" fill-opacity="0\.8"\/>/);
    assert.match(svg, /<path fill="#1d3557" fill-opacity="0\.502" d=/);
    assert.doesNotMatch(svgOf({ fg: '#123' }), /opacity/);
  });

  test('rasterizes (resvg) to exactly the module matrix at one pixel per module', () => {
    for (const [content, ecc, margin] of [
      ['x', 'M', 4],
      ['https://example.com/path?query=1&more=2', 'H', 0],
      ['東京 😀', 'L', 2],
    ] as const) {
      const matrix = encodeQrMatrix(content, ecc);
      const svg = renderQr(parseQrRequest({ content, ecc, margin, scale: 1, format: 'svg' }, 'json')).bytes;
      const image = new Resvg(Buffer.from(svg), { background: 'white', font: { loadSystemFonts: false } }).render();
      const side = matrix.modules + 2 * margin;
      assert.deepEqual([image.width, image.height], [side, side]);
      for (let y = 0; y < side; y++) {
        for (let x = 0; x < side; x++) {
          const mx = x - margin;
          const my = y - margin;
          const dark = mx >= 0 && my >= 0 && mx < matrix.modules && my < matrix.modules && matrix.dark[my * matrix.modules + mx] === 1;
          const red = image.pixels[(y * side + x) * 4] as number;
          if ((red < 128) !== dark) assert.fail(`${content}: module (${x}, ${y}) should be ${dark ? 'dark' : 'light'}`);
        }
      }
    }
  });

  test('rasterizes at its declared size', () => {
    const image = new Resvg(Buffer.from(svgOf({ size: 777 })), { font: { loadSystemFonts: false } }).render();
    assert.deepEqual([image.width, image.height], [777, 777]);
  });
});
