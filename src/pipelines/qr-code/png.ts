/**
 * A small, deterministic PNG writer for QR rasters: 1-bit palette (PLTE: background, foreground;
 * tRNS only when a color is translucent), no ancillary chunks, no timestamps.
 *
 * Compression is chosen for bytes that never change: a row identical to the one above is written
 * with filter Up (all zeros), any other row with filter None, and zlib deflates with `Z_RLE`.
 * Node's zlib (Chromium's fork) hashes strings with CRC32C when the CPU has SSE4.2/ARMv8-CRC and
 * with the canonical rolling hash otherwise, so its default strategy can emit different bytes on
 * different machines; `Z_RLE` only looks back one byte and uses no hash, so the output depends on
 * the pixels alone. It is also ~10x faster; the cost is about twice the size of the default
 * strategy (≈1.3 KB instead of ≈0.6 KB for a 60-character URL at 512 px).
 */
import { constants, deflateSync } from 'node:zlib';
import type { Rgba } from './color.ts';
import { crc32 } from './crc32.ts';
import type { QrLayout } from './layout.ts';
import type { QrMatrix } from './matrix.ts';

/** The two colors of a QR image. */
export interface QrColors {
  fg: Rgba;
  bg: Rgba;
}

/** Fixed deflate settings; changing any of them changes output bytes (bump the renderer profile). */
const DEFLATE_OPTIONS = Object.freeze({ level: 9, memLevel: 9, windowBits: 15, strategy: constants.Z_RLE });
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const COLOR_TYPE_PALETTE = 3;
const FILTER_NONE = 0;
const FILTER_UP = 2;

/** Encodes `matrix` drawn with `layout` as a PNG of `layout.imageSizePx` square pixels. */
export function writeQrPng(matrix: QrMatrix, layout: QrLayout, colors: QrColors): Uint8Array {
  const chunks = [
    chunk('IHDR', header(layout.imageSizePx)),
    chunk('PLTE', Uint8Array.of(colors.bg.red, colors.bg.green, colors.bg.blue, colors.fg.red, colors.fg.green, colors.fg.blue)),
  ];
  const alphas = paletteAlphas(colors);
  if (alphas !== undefined) chunks.push(chunk('tRNS', alphas));
  chunks.push(chunk('IDAT', deflateSync(filteredScanlines(matrix, layout), DEFLATE_OPTIONS)), chunk('IEND', new Uint8Array(0)));
  const out = new Uint8Array(PNG_SIGNATURE.length + chunks.reduce((sum, c) => sum + c.length, 0));
  out.set(PNG_SIGNATURE, 0);
  let offset = PNG_SIGNATURE.length;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

function header(sizePx: number): Uint8Array {
  const data = new Uint8Array(13);
  const view = new DataView(data.buffer);
  view.setUint32(0, sizePx);
  view.setUint32(4, sizePx);
  data[8] = 1; // bit depth: palette index 0 (background) or 1 (foreground)
  data[9] = COLOR_TYPE_PALETTE;
  // compression, filter method and interlace stay 0 (deflate, adaptive filtering, none)
  return data;
}

/** tRNS entries (alpha of index 0, then 1), trailing opaque ones left out; none when both are opaque. */
function paletteAlphas(colors: QrColors): Uint8Array | undefined {
  if (colors.fg.alpha < 255) return Uint8Array.of(colors.bg.alpha, colors.fg.alpha);
  return colors.bg.alpha < 255 ? Uint8Array.of(colors.bg.alpha) : undefined;
}

/** length, type, data, CRC of type and data. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out, 4, 8 + data.length));
  return out;
}

/** The raw image data: one filter byte then the packed row, for each pixel row. */
function filteredScanlines(matrix: QrMatrix, layout: QrLayout): Uint8Array {
  const sizePx = layout.imageSizePx;
  const rowBytes = Math.ceil(sizePx / 8);
  const stride = rowBytes + 1;
  const moduleAt = pixelToModule(layout, matrix.modules);
  const blank = new Uint8Array(rowBytes);
  const packedRows: Uint8Array[] = [];
  for (let row = 0; row < matrix.modules; row++) packedRows.push(packRow(matrix, row, moduleAt, rowBytes));
  const out = new Uint8Array(stride * sizePx);
  let previous: Uint8Array | undefined;
  for (let y = 0; y < sizePx; y++) {
    const moduleRow = moduleAt[y] as number;
    const packed = moduleRow < 0 ? blank : (packedRows[moduleRow] as Uint8Array);
    if (previous !== undefined && sameBytes(previous, packed)) {
      out[y * stride] = FILTER_UP; // the row minus the one above: all zeros, already there
    } else {
      out[y * stride] = FILTER_NONE;
      out.set(packed, y * stride + 1);
    }
    previous = packed;
  }
  return out;
}

/** For each pixel offset along a side: the module index it shows, or -1 in the quiet zone. */
function pixelToModule(layout: QrLayout, modules: number): Int32Array {
  const map = new Int32Array(layout.imageSizePx).fill(-1);
  const end = layout.symbolOffsetPx + modules * layout.pixelsPerModule;
  for (let px = layout.symbolOffsetPx; px < end; px++) map[px] = Math.floor((px - layout.symbolOffsetPx) / layout.pixelsPerModule);
  return map;
}

/** One pixel row through module row `row`, 1 bit per pixel, most significant bit first. */
function packRow(matrix: QrMatrix, row: number, moduleAt: Int32Array, rowBytes: number): Uint8Array {
  const packed = new Uint8Array(rowBytes);
  const base = row * matrix.modules;
  for (let x = 0; x < moduleAt.length; x++) {
    const column = moduleAt[x] as number;
    if (column >= 0 && matrix.dark[base + column] === 1) packed[x >> 3] = (packed[x >> 3] as number) | (0x80 >> (x & 7));
  }
  return packed;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
