/**
 * Where the symbol goes in the image: which version the content needs, how many whole pixels
 * each module gets, and how much quiet zone surrounds it. Computed from the options alone (no
 * encoding), so a request that cannot be drawn is refused with a 422 before any job is queued,
 * and the renderer draws exactly the planned geometry.
 */
import { UnprocessableError } from '../../index.ts';
import { QR_MAX_CONTENT_BYTES, qrModulesPerSide, qrVersionFor, type QrEcc } from './capacity.ts';

/** The largest image side, px (for `size`, and for `scale` times the modules). */
export const QR_MAX_IMAGE_SIZE_PX = 4096;

/** What the layout depends on; {@link QrOptions} satisfies it. */
export interface QrLayoutInput {
  content: string;
  ecc: QrEcc;
  margin: number;
  size?: number;
  scale?: number;
}

/** The geometry of one rendered QR image (square: width = height). */
export interface QrLayout {
  /** QR version (1..40) the encoder picks for this content and level. */
  version: number;
  /** Modules per side of the symbol, without quiet zone. */
  modules: number;
  /** Modules per side including the requested quiet zone: `modules + 2 * margin`. */
  totalModules: number;
  /** Whole pixels per module side (PNG); the SVG scales the same grid. */
  pixelsPerModule: number;
  /** Image width and height, px. */
  imageSizePx: number;
  /**
   * px from the left (and top) edge to the first symbol module: the margin plus half of the
   * pixels left over when `size` is not a multiple of `totalModules` (the smaller half, so the
   * extra quiet zone on the right and bottom is the same or one pixel wider).
   */
  symbolOffsetPx: number;
}

/** UTF-8 length of `content`, the unit every QR limit is counted in (byte mode). */
export function utf8ByteLength(content: string): number {
  return Buffer.byteLength(content, 'utf8');
}

/**
 * Plans the image for `input`. Throws `QR_CONTENT_TOO_LONG` when no version holds the content
 * at this level, `QR_SIZE_TOO_SMALL` when `size` leaves less than one pixel per module and
 * `QR_SIZE_TOO_LARGE` when `scale` makes the image wider than {@link QR_MAX_IMAGE_SIZE_PX}.
 */
export function planQrLayout(input: QrLayoutInput): QrLayout {
  const version = versionFor(input.content, input.ecc);
  const modules = qrModulesPerSide(version);
  const totalModules = modules + 2 * input.margin;
  if (input.scale !== undefined) return scaledLayout(version, modules, input.margin, input.scale);
  const sizePx = input.size ?? 0;
  const pixelsPerModule = Math.floor(sizePx / totalModules);
  if (pixelsPerModule < 1) {
    throw new UnprocessableError(
      'QR_SIZE_TOO_SMALL',
      `size ${sizePx} px is too small: the symbol needs ${totalModules} modules per side (${modules} plus a margin of ${input.margin} on each side), so the minimum size is ${totalModules} px`,
      { details: { size: sizePx, minimumSize: totalModules, modules, margin: input.margin } },
    );
  }
  const leftoverPx = sizePx - totalModules * pixelsPerModule;
  const symbolOffsetPx = input.margin * pixelsPerModule + Math.floor(leftoverPx / 2);
  return { version, modules, totalModules, pixelsPerModule, imageSizePx: sizePx, symbolOffsetPx };
}

function versionFor(content: string, ecc: QrEcc): number {
  const contentBytes = utf8ByteLength(content);
  const version = qrVersionFor(contentBytes, ecc);
  if (version !== undefined) return version;
  const limitBytes = QR_MAX_CONTENT_BYTES[ecc];
  throw new UnprocessableError(
    'QR_CONTENT_TOO_LONG',
    `content is ${contentBytes} bytes of UTF-8, but a QR code at ecc ${ecc} holds at most ${limitBytes} bytes`,
    { details: { contentBytes, limitBytes, ecc } },
  );
}

function scaledLayout(version: number, modules: number, margin: number, scale: number): QrLayout {
  const totalModules = modules + 2 * margin;
  const imageSizePx = totalModules * scale;
  if (imageSizePx > QR_MAX_IMAGE_SIZE_PX) {
    const maximumScale = Math.floor(QR_MAX_IMAGE_SIZE_PX / totalModules);
    throw new UnprocessableError(
      'QR_SIZE_TOO_LARGE',
      `scale ${scale} makes the image ${imageSizePx} px (${totalModules} modules x ${scale}), more than the maximum of ${QR_MAX_IMAGE_SIZE_PX} px; use a scale of at most ${maximumScale}`,
      { details: { scale, imageSizePx, maximumSizePx: QR_MAX_IMAGE_SIZE_PX, maximumScale, totalModules } },
    );
  }
  return { version, modules, totalModules, pixelsPerModule: scale, imageSizePx, symbolOffsetPx: margin * scale };
}
