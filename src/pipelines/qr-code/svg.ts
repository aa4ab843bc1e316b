/**
 * A compact, deterministic SVG writer for QR symbols: a background rect (left out when the
 * background is fully transparent) and one path holding every dark module, in a viewBox counted
 * in modules (symbol plus quiet zone). `width`/`height` are the PNG's pixel size, so both formats
 * of one request have the same intrinsic size; the SVG scales the module grid evenly instead of
 * the PNG's whole-pixel modules plus leftover quiet zone.
 */
import { rgbaOf } from './color.ts';
import type { QrLayout } from './layout.ts';
import type { QrMatrix } from './matrix.ts';

/** Colors as normalized `#rrggbbaa`. */
export interface QrSvgColors {
  fg: string;
  bg: string;
}

/** The SVG document for `matrix` drawn with `layout`, as UTF-8 bytes. */
export function writeQrSvg(matrix: QrMatrix, layout: QrLayout, colors: QrSvgColors): Uint8Array {
  const total = layout.totalModules;
  const margin = (total - matrix.modules) / 2;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${layout.imageSizePx}" height="${layout.imageSizePx}" viewBox="0 0 ${total} ${total}" shape-rendering="crispEdges">`,
  ];
  if (rgbaOf(colors.bg).alpha > 0) parts.push(`<rect width="${total}" height="${total}"${fillAttributes(colors.bg)}/>`);
  parts.push(`<path${fillAttributes(colors.fg)} d="${darkModulesPath(matrix, margin)}"/>`, '</svg>\n');
  return new TextEncoder().encode(parts.join(''));
}

/** ` fill="#rrggbb"`, plus ` fill-opacity` when the color is translucent. */
function fillAttributes(color: string): string {
  const alpha = rgbaOf(color).alpha;
  const fill = ` fill="${color.slice(0, 7)}"`;
  // Three decimals map back to the same 0..255 alpha (the rounding error is at most 0.13 / 255).
  return alpha === 255 ? fill : `${fill} fill-opacity="${Number((alpha / 255).toFixed(3))}"`;
}

/**
 * One rectangle subpath per horizontal run of dark modules. The first starts with an absolute
 * `M`; each next one moves relative to the previous run's start (where `z` leaves the pen).
 */
function darkModulesPath(matrix: QrMatrix, margin: number): string {
  const n = matrix.modules;
  const parts: string[] = [];
  let penX = 0;
  let penY = 0;
  for (let y = 0; y < n; y++) {
    let x = 0;
    while (x < n) {
      if (matrix.dark[y * n + x] !== 1) {
        x++;
        continue;
      }
      const start = x;
      while (x < n && matrix.dark[y * n + x] === 1) x++;
      const runX = start + margin;
      const runY = y + margin;
      const move = parts.length === 0 ? `M${runX} ${runY}` : `m${runX - penX} ${runY - penY}`;
      parts.push(`${move}h${x - start}v1h-${x - start}z`);
      penX = runX;
      penY = runY;
    }
  }
  return parts.join('');
}
