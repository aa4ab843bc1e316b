/**
 * The transform step: one normalized intermediate per source, from which every profile is
 * rendered. Raster input is decoded by sharp with an explicit pixel limit and sharp's strictest
 * `failOn` ('warning', its default, spelled out): EXIF orientation applied, converted to 8-bit
 * sRGB (CMYK and other ICC profiles included), metadata stripped (sharp writes none unless
 * asked), alpha kept, and for animated GIF/WebP (and multi-page TIFF) only the first frame/page.
 * SVG never reaches sharp (librsvg is not exposed to uploads): it is sanitized and rasterized by
 * `svg-render.ts`. The output is a lossless PNG with fixed encoder options, so the same input and
 * toolchain give the same bytes.
 */
import sharp from 'sharp';
import { ValidationError } from '../../../index.ts';
import { assetFailure } from './asset-failure.ts';
import { AssetFormat } from './asset-format.ts';
import { sniffFormat, type AssetInfo } from './sniff.ts';
import { renderSvgStoppable } from './svg-render.ts';

/** Longer side of a rasterized SVG intermediate: the largest default profile, so it never upscales. */
export const SVG_RASTER_SIDE_PX = 2048;

/**
 * Fixed PNG encoder options of the intermediate (deterministic, lossless, full color). Level 1:
 * on a 2000x1500 photo it encodes in about half the time of level 6 for ~15% more bytes, and the
 * intermediate is read back only by the render step.
 */
export const INTERMEDIATE_PNG_OPTIONS = Object.freeze({
  compressionLevel: 1,
  adaptiveFiltering: false,
  palette: false,
  progressive: false,
} as const);

/** The normalized intermediate. */
export interface NormalizedImage {
  /** 8-bit sRGB PNG (RGB or RGBA), upright, without metadata. */
  bytes: Uint8Array;
  width: number;
  height: number;
  mediaType: 'image/png';
}

/** Limits of {@link normalizeImage}. */
export interface NormalizeLimits {
  /** Largest width x height sharp may decode (its `limitInputPixels`), and the SVG raster budget. */
  maxPixels: number;
  /**
   * Longest an SVG may take to rasterize; past it the render is stopped and the asset fails as
   * permanent `ASSET_TOO_COMPLEX`. @default DEFAULT_SVG_RENDER_BUDGET_MS
   */
  svgRenderBudgetMs?: number;
  /** The attempt's signal: aborting it stops an SVG render at once (no CPU spent after). */
  signal?: AbortSignal;
}

/** Default of {@link NormalizeLimits.svgRenderBudgetMs}: well inside the transform stage's timeout. */
export const DEFAULT_SVG_RENDER_BUDGET_MS = 30_000;

let svgLoaderBlocked = false;

/**
 * Blocks libvips' SVG loader in this process (`sharp.block`), so no byte sequence can make sharp
 * hand an upload to librsvg, whatever the sniffing said. Process-wide and idempotent; called by
 * {@link normalizeImage}, exported so a worker can call it at start-up.
 */
export function blockSharpSvgLoader(): void {
  if (svgLoaderBlocked) return;
  sharp.block({ operation: ['VipsForeignLoadSvg'] });
  svgLoaderBlocked = true;
}

/**
 * Normalizes an inspected asset (see the module comment). `info` is the output of `inspectAsset`
 * for the same bytes; the bytes are sniffed again and must agree, so nothing but an accepted raster
 * format reaches sharp. Decoding failures are permanent `ASSET_UNREADABLE`, an image over the
 * pixel limit permanent `ASSET_TOO_MANY_PIXELS`.
 */
export async function normalizeImage(input: Uint8Array, info: AssetInfo, limits: NormalizeLimits): Promise<NormalizedImage> {
  if (!Number.isSafeInteger(limits.maxPixels) || limits.maxPixels < 1) throw new ValidationError(`maxPixels must be a positive integer, got ${limits.maxPixels}`);
  // The whole input: file-type reads a TIFF's directory wherever it lies.
  const sniffed = await sniffFormat(input);
  if (sniffed.format !== info.format) {
    throw assetFailure('ASSET_UNREADABLE', `the bytes are not the inspected ${info.format}`, { reason: 'format-changed', expected: info.format, detected: sniffed.format ?? null });
  }
  if (info.format === AssetFormat.svg) return normalizeSvg(input, limits);
  blockSharpSvgLoader();
  try {
    const { data, info: out } = await sharp(input, {
      limitInputPixels: limits.maxPixels,
      failOn: 'warning',
      autoOrient: true,
      // The first frame or page only; an explicit 1 so a changed default cannot decode all of them.
      pages: 1,
      page: 0,
    })
      .toColourspace('srgb')
      .png(INTERMEDIATE_PNG_OPTIONS)
      .toBuffer({ resolveWithObject: true });
    return { bytes: data, width: out.width, height: out.height, mediaType: 'image/png' };
  } catch (err) {
    throw decodeFailure(err, info);
  }
}

/** SVG: sanitized and rendered with its longer side at {@link SVG_RASTER_SIDE_PX}, within the pixel budget. */
async function normalizeSvg(input: Uint8Array, limits: NormalizeLimits): Promise<NormalizedImage> {
  // A square of the longer side bounds the raster from above, whatever the aspect ratio.
  const side = Math.max(1, Math.min(SVG_RASTER_SIDE_PX, Math.floor(Math.sqrt(limits.maxPixels))));
  const budgetMs = limits.svgRenderBudgetMs ?? DEFAULT_SVG_RENDER_BUDGET_MS;
  const rendered = await renderSvgStoppable(input, side, { budgetMs, ...(limits.signal === undefined ? {} : { signal: limits.signal }) });
  return { bytes: rendered.png, width: rendered.width, height: rendered.height, mediaType: 'image/png' };
}

/**
 * sharp's errors, classified: the pixel limit is `ASSET_TOO_MANY_PIXELS`; running out of memory
 * may pass, so it stays a plain (retryable) error; anything else the input caused (corrupt,
 * truncated, unsupported variant) is `ASSET_UNREADABLE`.
 */
function decodeFailure(err: unknown, info: AssetInfo): Error {
  const message = err instanceof Error ? err.message : String(err);
  if (/pixel limit/i.test(message)) {
    return assetFailure('ASSET_TOO_MANY_PIXELS', `the ${info.format} exceeds the pixel limit while decoding`, { width: info.width, height: info.height }, err);
  }
  if (/out of memory|cannot allocate/i.test(message)) return err instanceof Error ? err : new Error(message);
  return assetFailure('ASSET_UNREADABLE', `the ${info.format} cannot be decoded: ${message}`, { reason: 'decode' }, err);
}
