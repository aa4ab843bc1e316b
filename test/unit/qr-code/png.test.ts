import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { crc32 } from '../../../src/pipelines/qr-code/crc32.ts';
import { encodeQrMatrix } from '../../../src/pipelines/qr-code/matrix.ts';
import { parseQrRequest } from '../../../src/pipelines/qr-code/options.ts';
import { renderQr } from '../../../src/pipelines/qr-code/render.ts';

interface Chunk {
  type: string;
  data: Uint8Array;
}

/** The chunks of a PNG, checking the signature and every chunk's CRC. */
function readChunks(png: Uint8Array): Chunk[] {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const chunks: Chunk[] = [];
  for (let offset = 8; offset < png.length; ) {
    const length = view.getUint32(offset);
    const type = Buffer.from(png.subarray(offset + 4, offset + 8)).toString('latin1');
    assert.equal(view.getUint32(offset + 8 + length), crc32(png, offset + 4, offset + 8 + length), `${type} CRC`);
    chunks.push({ type, data: png.subarray(offset + 8, offset + 8 + length) });
    offset += 12 + length;
  }
  return chunks;
}

/** Width, height and the palette index of every pixel of a 1-bit palette PNG (filters None/Up only). */
function readPixels(png: Uint8Array): { width: number; height: number; index: (x: number, y: number) => number; filters: Set<number> } {
  const chunks = readChunks(png);
  const ihdr = chunks[0];
  assert.equal(ihdr?.type, 'IHDR');
  const header = new DataView(ihdr.data.buffer, ihdr.data.byteOffset, ihdr.data.byteLength);
  const width = header.getUint32(0);
  const height = header.getUint32(4);
  assert.deepEqual([...ihdr.data.subarray(8)], [1, 3, 0, 0, 0], 'bit depth 1, palette, deflate, adaptive filters, no interlace');
  const raw = inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  const rowBytes = Math.ceil(width / 8);
  assert.equal(raw.length, height * (rowBytes + 1));
  const rows: Uint8Array[] = [];
  const filters = new Set<number>();
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (rowBytes + 1)] as number;
    filters.add(filter);
    const line = Uint8Array.from(raw.subarray(y * (rowBytes + 1) + 1, (y + 1) * (rowBytes + 1)));
    if (filter === 2) for (let i = 0; i < rowBytes; i++) line[i] = ((line[i] as number) + (rows[y - 1]?.[i] ?? 0)) & 0xff;
    else assert.equal(filter, 0, 'only filters None and Up are used');
    rows.push(line);
  }
  return { width, height, filters, index: (x, y) => (((rows[y] as Uint8Array)[x >> 3] as number) >> (7 - (x & 7))) & 1 };
}

describe('crc32', () => {
  test('matches the standard check values', () => {
    assert.equal(crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
    assert.equal(crc32(new Uint8Array(0)), 0);
    assert.equal(crc32(new TextEncoder().encode('IEND')), 0xae426082);
  });
});

describe('QR PNG', () => {
  test('is exactly size x size pixels for every size, also when modules do not divide it', () => {
    for (const content of ['x', 'https://example.com/' + 'p'.repeat(80)]) {
      for (const size of [64, 65, 100, 333, 511, 512, 1000, 4095, 4096]) {
        const image = renderQr(parseQrRequest({ content, size }, 'json'));
        const { width, height } = readPixels(image.bytes);
        assert.deepEqual([width, height, image.width, image.height], [size, size, size, size], `${content.length} chars at ${size}`);
      }
    }
  });

  test('with scale it is (modules + 2 x margin) x scale pixels', () => {
    // "x" is version 1: 21 modules.
    for (const [scale, margin] of [
      [1, 0],
      [1, 4],
      [7, 2],
      [64, 16],
    ] as const) {
      const image = renderQr(parseQrRequest({ content: 'x', scale, margin }, 'json'));
      const expected = (21 + 2 * margin) * scale;
      assert.deepEqual([readPixels(image.bytes).width, image.width], [expected, expected]);
    }
  });

  test('draws every module with whole pixels and splits leftover pixels evenly into the quiet zone', () => {
    for (const [content, size, margin, ecc] of [
      ['x', 100, 4, 'M'],
      ['x', 87, 4, 'M'],
      ['https://example.com/?q=1', 512, 0, 'H'],
      ['Grüße', 333, 16, 'L'],
    ] as const) {
      const matrix = encodeQrMatrix(content, ecc);
      const total = matrix.modules + 2 * margin;
      const perModule = Math.floor(size / total);
      const leftover = size - total * perModule;
      const offset = margin * perModule + Math.floor(leftover / 2);
      const pixels = readPixels(renderQr(parseQrRequest({ content, size, margin, ecc }, 'json')).bytes);
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          const mx = Math.floor((x - offset) / perModule);
          const my = Math.floor((y - offset) / perModule);
          const inside = x >= offset && y >= offset && mx < matrix.modules && my < matrix.modules;
          const dark = inside && matrix.dark[my * matrix.modules + mx] === 1 ? 1 : 0;
          if (pixels.index(x, y) !== dark) assert.fail(`${content} at ${size}: pixel (${x}, ${y}) should be ${dark ? 'dark' : 'light'}`);
        }
      }
      // The extra quiet zone differs by at most one pixel between the two sides.
      const after = size - offset - matrix.modules * perModule;
      assert.ok(after - offset === leftover % 2, `offsets ${offset} / ${after}`);
    }
  });

  test('uses a two-color palette, background first, with tRNS only for translucent colors', () => {
    const chunksOf = (raw: Record<string, unknown>): Chunk[] => readChunks(renderQr(parseQrRequest({ content: 'x', ...raw }, 'json')).bytes);
    const types = (chunks: Chunk[]): string[] => chunks.map((c) => c.type);
    const opaque = chunksOf({ fg: '#102030', bg: '#f0e0d0' });
    assert.deepEqual(types(opaque), ['IHDR', 'PLTE', 'IDAT', 'IEND']);
    assert.deepEqual([...(opaque[1]?.data ?? [])], [0xf0, 0xe0, 0xd0, 0x10, 0x20, 0x30]);
    const clearBackground = chunksOf({ bg: '#ffffff00' });
    assert.deepEqual(types(clearBackground), ['IHDR', 'PLTE', 'tRNS', 'IDAT', 'IEND']);
    assert.deepEqual([...(clearBackground[2]?.data ?? [])], [0]);
    const translucentForeground = chunksOf({ fg: '#00000080' });
    assert.deepEqual([...(translucentForeground[2]?.data ?? [])], [255, 0x80]);
  });

  test('writes rows equal to the row above with filter Up and the others with None', () => {
    const pixels = readPixels(renderQr(parseQrRequest({ content: 'x', size: 512 }, 'json')).bytes);
    assert.deepEqual([...pixels.filters].sort(), [0, 2]);
  });

  test('has no ancillary chunks (no time, gamma or text that could vary)', () => {
    const image = renderQr(parseQrRequest({ content: 'x', bg: '#ffffff00' }, 'json'));
    for (const chunk of readChunks(image.bytes)) assert.ok(['IHDR', 'PLTE', 'tRNS', 'IDAT', 'IEND'].includes(chunk.type), chunk.type);
  });
});
