/**
 * Asset inspection before any pixel is decoded: the real format from the bytes (file-type, plus
 * an SVG check, since file-type does not detect SVG), the dimensions from the header (image-size),
 * and the limits. Only the bytes decide: a file name is never consulted, and a declared
 * `Content-Type` may only confirm the sniffed format, never override it.
 *
 * Checks run cheapest first, so each bad input gets one stable code: empty -> `ASSET_UNREADABLE`;
 * over `maxBytes` -> `ASSET_TOO_LARGE`; not an accepted format -> `ASSET_UNSUPPORTED_FORMAT`;
 * contradicting `Content-Type` -> `ASSET_TYPE_MISMATCH`; header missing, truncated or corrupt ->
 * `ASSET_UNREADABLE`; width x height (x frames) over `maxPixels` -> `ASSET_TOO_MANY_PIXELS`.
 */
import { fileTypeFromBuffer } from 'file-type';
import { ValidationError } from '../../../index.ts';
import { assetFailure } from './asset-failure.ts';
import { ASSET_MEDIA_TYPES, AssetFormat, declaredMediaType, declaresFormat } from './asset-format.ts';
import { countFrames } from './frame-count.ts';
import { readHeaderSize, type HeaderSize } from './header-size.ts';
import { looksLikeSvg } from './svg-detect.ts';
import { measureSvg } from './svg-render.ts';
import { SVG_MAX_BYTES } from './svg-sanitize.ts';
import { isTiff, tiffHeadWithIfd } from './tiff-ifd.ts';

/**
 * How many leading bytes {@link inspectAsset} needs: pass `min(totalBytes, INSPECT_HEAD_BYTES)`.
 * 4 MiB, because:
 * - it equals the SVG size limit, so an acceptable SVG is always inspected whole (its size comes
 *   from resvg's reading of the sanitized document, and a bad SVG is refused here already);
 * - JPEG dimensions sit in the SOF segment after all APPn segments (EXIF, ICC profiles in several
 *   64 KiB chunks, XMP), which real files keep well inside it;
 * - PNG, GIF, WebP and AVIF headers sit in the first kilobytes; frames of animated GIF and WebP
 *   are counted within it (a lower bound for longer files).
 * TIFF is the exception: its first IFD may lie anywhere (libtiff writes it after the pixel data).
 * When it lies past the head, `readAt` fetches it; without `readAt` such a TIFF is unreadable.
 */
export const INSPECT_HEAD_BYTES = SVG_MAX_BYTES;

/** What inspection found out about an asset. JSON-serializable (a stage output as it is). */
export interface AssetInfo {
  format: AssetFormat;
  /** Canonical media type of `format` (not the declared one). */
  mediaType: string;
  /** Width in pixels as stored (before EXIF orientation); for SVG, resvg's intrinsic size. */
  width: number;
  height: number;
  /** Frames of an animated GIF or WebP, when more than one was found. */
  pages?: number;
  /** EXIF orientation (1-8) of a JPEG, when present. */
  orientation?: number;
}

/** Inputs of {@link inspectAsset} besides the head bytes. */
export interface InspectOptions {
  /** The `Content-Type` the client declared, verbatim; absent or `application/octet-stream` = not declared. */
  declaredType?: string;
  /** Largest accepted asset, in bytes. */
  maxBytes: number;
  /** Largest accepted width x height (x frames, when known). */
  maxPixels: number;
  /** Size of the whole asset, in bytes. */
  totalBytes: number;
  /** Reads `lengthBytes` bytes at `offsetBytes` of the asset (only for TIFF IFDs past the head). */
  readAt?(offsetBytes: number, lengthBytes: number): Promise<Uint8Array>;
}

/** Result of {@link sniffFormat}: an accepted format, or what was detected instead (null: nothing). */
export type SniffResult = { format: AssetFormat } | { format: undefined; detected: string | null };

/** file-type's media types of the accepted raster formats (APNG is read as its PNG first frame). */
const RASTER_BY_MEDIA_TYPE: Readonly<Record<string, AssetFormat>> = {
  'image/png': AssetFormat.png,
  'image/apng': AssetFormat.png,
  'image/jpeg': AssetFormat.jpeg,
  'image/webp': AssetFormat.webp,
  'image/gif': AssetFormat.gif,
  'image/avif': AssetFormat.avif,
  'image/tiff': AssetFormat.tiff,
};

/** image-size's type names that agree with each raster format. */
const SIZE_TYPES: Readonly<Record<Exclude<AssetFormat, 'svg'>, readonly string[]>> = {
  png: ['png'],
  jpeg: ['jpg'],
  webp: ['webp'],
  gif: ['gif'],
  avif: ['avif'],
  tiff: ['tiff', 'bigtiff'],
};

/** The format of `head` (the first bytes of an asset), judged from the bytes alone. */
export async function sniffFormat(head: Uint8Array): Promise<SniffResult> {
  if (looksLikeSvg(head)) return { format: AssetFormat.svg };
  const detected = await fileTypeFromBuffer(head);
  if (detected === undefined) return { format: undefined, detected: null };
  const format = RASTER_BY_MEDIA_TYPE[detected.mime];
  return format === undefined ? { format: undefined, detected: detected.mime } : { format };
}

/**
 * Inspects an asset from its first bytes (see {@link INSPECT_HEAD_BYTES}) without decoding any
 * pixels, and refuses it with a permanent StageFailure (codes in the module comment) when it
 * must not be processed.
 */
export async function inspectAsset(head: Uint8Array, options: InspectOptions): Promise<AssetInfo> {
  const { totalBytes, maxBytes } = options;
  if (head.byteLength < Math.min(totalBytes, INSPECT_HEAD_BYTES) || head.byteLength > totalBytes) {
    throw new ValidationError(`inspectAsset needs the first min(totalBytes, ${INSPECT_HEAD_BYTES}) bytes; got ${head.byteLength} of ${totalBytes}`);
  }
  if (totalBytes === 0) throw assetFailure('ASSET_UNREADABLE', 'the asset is empty (0 bytes)', { reason: 'empty' });
  if (totalBytes > maxBytes) {
    throw assetFailure('ASSET_TOO_LARGE', `the asset has ${totalBytes} bytes, more than the ${maxBytes} accepted`, { totalBytes, limitBytes: maxBytes });
  }
  // For a TIFF whose directory lies past the head, header + directory; else the head itself.
  const header = await tiffHeadWithIfd(head, options);
  const sniffed = await sniffFormat(header);
  if (sniffed.format === undefined && isTiff(head)) {
    // file-type needs the directory to call it TIFF; without it the header is incomplete, not foreign.
    throw assetFailure('ASSET_UNREADABLE', 'the TIFF directory cannot be read (it lies past the inspected head and no readAt was given, or is damaged)', { reason: 'header' });
  }
  if (sniffed.format === undefined) {
    const what = sniffed.detected ?? 'not a recognized image format';
    throw assetFailure('ASSET_UNSUPPORTED_FORMAT', `unsupported format (${what}); accepted: PNG, JPEG, WebP, GIF, AVIF, TIFF, SVG`, { detected: sniffed.detected });
  }
  const format = sniffed.format;
  checkDeclaredType(options.declaredType, format);
  const info = format === AssetFormat.svg ? svgInfo(head, totalBytes) : rasterInfo(format, head, header);
  checkPixels(info, options.maxPixels);
  return info;
}

function checkDeclaredType(declaredType: string | undefined, format: AssetFormat): void {
  const declared = declaredMediaType(declaredType);
  if (declared === undefined || declaresFormat(declared, format)) return;
  throw assetFailure('ASSET_TYPE_MISMATCH', `declared Content-Type ${declared} but the bytes are ${ASSET_MEDIA_TYPES[format]}`, {
    declared,
    detected: ASSET_MEDIA_TYPES[format],
  });
}

/** SVG: inspected whole (sanitized, then measured by resvg); its declared size is no decoding cost. */
function svgInfo(head: Uint8Array, totalBytes: number): AssetInfo {
  if (totalBytes > SVG_MAX_BYTES) {
    throw assetFailure('ASSET_UNREADABLE', `SVG has ${totalBytes} bytes, more than the ${SVG_MAX_BYTES} accepted`, { reason: 'too-large', limitBytes: SVG_MAX_BYTES });
  }
  const size = measureSvg(head);
  const width = Math.max(1, Math.round(size.width));
  const height = Math.max(1, Math.round(size.height));
  return { format: AssetFormat.svg, mediaType: ASSET_MEDIA_TYPES.svg, width, height };
}

/** Dimensions (and orientation, frames) of a raster format from its header (`header`: see tiff-ifd.ts). */
function rasterInfo(format: Exclude<AssetFormat, 'svg'>, head: Uint8Array, header: Uint8Array): AssetInfo {
  let size: HeaderSize;
  try {
    size = readHeaderSize(header);
  } catch (err) {
    throw assetFailure('ASSET_UNREADABLE', `the ${format} header is truncated or corrupt: ${(err as Error).message}`, { reason: 'header' }, err);
  }
  if (!SIZE_TYPES[format].includes(size.type ?? '') || !(size.width > 0 && size.height > 0)) {
    throw assetFailure('ASSET_UNREADABLE', `the ${format} header declares no valid dimensions`, { reason: 'header' });
  }
  const frames = countFrames(format, head);
  return {
    format,
    mediaType: ASSET_MEDIA_TYPES[format],
    width: size.width,
    height: size.height,
    ...(frames !== undefined && frames > 1 ? { pages: frames } : {}),
    ...(size.orientation !== undefined && size.orientation >= 1 && size.orientation <= 8 ? { orientation: size.orientation } : {}),
  };
}

function checkPixels(info: AssetInfo, maxPixels: number): void {
  if (info.format === AssetFormat.svg) return;
  const pixels = info.width * info.height * (info.pages ?? 1);
  if (pixels <= maxPixels) return;
  throw assetFailure('ASSET_TOO_MANY_PIXELS', `${info.width}x${info.height}${info.pages ? ` x ${info.pages} frames` : ''} is ${pixels} pixels, more than the ${maxPixels} accepted`, {
    width: info.width,
    height: info.height,
    ...(info.pages ? { pages: info.pages } : {}),
    pixels,
    limitPixels: maxPixels,
  });
}
