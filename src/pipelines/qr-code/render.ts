/**
 * Renders validated QR options to image bytes. Pure and deterministic: the same options give
 * byte-identical output on every call and every machine (no timestamps, no randomness, fixed
 * hash-free deflate settings; see `png.ts`), which is what lets kiln address renders by
 * `qrContentHash` and serve them as immutable.
 */
import { rgbaOf } from './color.ts';
import { planQrLayout } from './layout.ts';
import { encodeQrMatrix } from './matrix.ts';
import { QrFormat, type QrOptions } from './options.ts';
import { writeQrPng } from './png.ts';
import { writeQrSvg } from './svg.ts';

/** Media types of the formats. */
export const QrMediaType = { png: 'image/png', svg: 'image/svg+xml' } as const;
/** One of {@link QrMediaType}'s values. */
export type QrMediaType = (typeof QrMediaType)[keyof typeof QrMediaType];

/** A rendered QR image. */
export interface RenderedQr {
  bytes: Uint8Array;
  mediaType: QrMediaType;
  /** Image width, px (the PNG's pixels; the SVG's `width` attribute). */
  width: number;
  /** Image height, px; always equal to `width`. */
  height: number;
}

/**
 * Renders `options` (as returned by `parseQrRequest`) to PNG or SVG. Throws the 422 layout errors
 * of `planQrLayout` for options that did not go through `parseQrRequest`.
 */
export function renderQr(options: QrOptions): RenderedQr {
  const layout = planQrLayout(options);
  const matrix = encodeQrMatrix(options.content, options.ecc);
  // The layout predicts the version from the capacity table; a mismatch is a bug, not bad input.
  if (matrix.modules !== layout.modules) {
    throw new Error(`QR layout predicted ${layout.modules} modules but the encoder drew ${matrix.modules}`);
  }
  const size = { width: layout.imageSizePx, height: layout.imageSizePx };
  if (options.format === QrFormat.svg) {
    return { bytes: writeQrSvg(matrix, layout, { fg: options.fg, bg: options.bg }), mediaType: QrMediaType.svg, ...size };
  }
  return { bytes: writeQrPng(matrix, layout, { fg: rgbaOf(options.fg), bg: rgbaOf(options.bg) }), mediaType: QrMediaType.png, ...size };
}
