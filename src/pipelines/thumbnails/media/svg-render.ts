/**
 * SVG rasterization with @resvg/resvg-js. Every entry point runs {@link sanitizeSvg} on its input
 * first (it does not trust callers to have done it): resvg reads local files named by
 * `<image href>`, and the sanitizer is what stands between an upload and the file system.
 *
 * Text is set with the DejaVu Sans family shipped in the `dejavu-fonts-ttf` package and system
 * fonts are never loaded, so the output does not depend on the host; every generic family
 * (`serif`, `monospace`, ...) maps to a bundled face, and unknown families fall back to
 * DejaVu Sans.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Resvg, type ResvgRenderOptions } from '@resvg/resvg-js';
import { ValidationError } from '../../../index.ts';
import { assetFailure } from './asset-failure.ts';
import { sanitizeSvg } from './svg-sanitize.ts';
import { renderInChildProcess, type SvgRenderLimits } from './svg-process.ts';

/** Largest `maxSidePx` accepted by the render functions. */
export const SVG_MAX_SIDE_PX = 16_384;

/** A rasterized SVG. */
export interface RenderedSvg {
  /** 8-bit RGBA PNG, as encoded by resvg. */
  png: Uint8Array;
  width: number;
  height: number;
}

/** Intrinsic size of an SVG, in CSS pixels, as resvg resolves it (width/height, viewBox, defaults). */
export interface SvgSize {
  width: number;
  height: number;
}

let fontFiles: readonly string[] | undefined;

/** Absolute paths of the bundled `DejaVuSans*.ttf` faces (Sans, Sans Mono, Sans Condensed), sorted. */
export function bundledFontFiles(): readonly string[] {
  if (fontFiles === undefined) {
    const dir = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');
    fontFiles = Object.freeze(
      readdirSync(dir)
        .filter((name) => /^DejaVuSans.*\.ttf$/.test(name))
        .sort()
        .map((name) => join(dir, name)),
    );
  }
  return fontFiles;
}

function resvgOptions(fitTo?: ResvgRenderOptions['fitTo']): ResvgRenderOptions {
  return {
    font: {
      loadSystemFonts: false,
      fontFiles: [...bundledFontFiles()],
      defaultFontFamily: 'DejaVu Sans',
      sansSerifFamily: 'DejaVu Sans',
      serifFamily: 'DejaVu Sans',
      cursiveFamily: 'DejaVu Sans',
      fantasyFamily: 'DejaVu Sans',
      monospaceFamily: 'DejaVu Sans Mono',
    },
    logLevel: 'off',
    ...(fitTo === undefined ? {} : { fitTo }),
  };
}

function renderFailure(err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  return assetFailure('ASSET_UNREADABLE', `SVG cannot be rendered: ${message}`, { reason: 'render' }, err);
}

/** Parses sanitized bytes; resvg's refusals (no size, bad structure) are permanent. */
function parse(clean: Buffer, fitTo?: ResvgRenderOptions['fitTo']): Resvg {
  try {
    return new Resvg(clean, resvgOptions(fitTo));
  } catch (err) {
    throw renderFailure(err);
  }
}

/** Scale so the longer side becomes `maxSidePx` (a vector image loses nothing when enlarged). */
function fitLongerSide(size: SvgSize, maxSidePx: number): ResvgRenderOptions['fitTo'] {
  if (!Number.isSafeInteger(maxSidePx) || maxSidePx < 1 || maxSidePx > SVG_MAX_SIDE_PX) {
    throw new ValidationError(`maxSidePx must be an integer from 1 to ${SVG_MAX_SIDE_PX}, got ${maxSidePx}`);
  }
  return size.width >= size.height ? { mode: 'width', value: maxSidePx } : { mode: 'height', value: maxSidePx };
}

/** Sanitizes `svg` and returns its intrinsic size (no rasterization). */
export function measureSvg(svg: Uint8Array): SvgSize {
  const tree = parse(Buffer.from(sanitizeSvg(svg)));
  if (!(tree.width > 0 && tree.height > 0)) throw renderFailure(new Error('SVG has no size'));
  return { width: tree.width, height: tree.height };
}

/**
 * Sanitizes `svg` and renders it so that its longer side is exactly `maxSidePx` pixels (aspect
 * ratio kept; small drawings are scaled up). Synchronous: it blocks the event loop for the
 * render (tens to hundreds of ms at 2048 px); prefer {@link renderSvgAsync} inside a worker.
 */
export function renderSvg(svg: Uint8Array, maxSidePx: number): RenderedSvg {
  const clean = Buffer.from(sanitizeSvg(svg));
  const fitTo = fitLongerSide(parse(clean), maxSidePx);
  try {
    const image = parse(clean, fitTo).render();
    return { png: image.asPng(), width: image.width, height: image.height };
  } catch (err) {
    throw renderFailure(err);
  }
}

/**
 * {@link renderSvg} in a child process of its own (see svg-process.ts), so the event loop keeps
 * running and the render can be stopped: by `limits.signal` (its reason is rethrown) or past
 * `limits.budgetMs` (a permanent `ASSET_TOO_COMPLEX`). No CPU is spent on it once this settles.
 */
export async function renderSvgStoppable(svg: Uint8Array, maxSidePx: number, limits: SvgRenderLimits): Promise<RenderedSvg> {
  const clean = Buffer.from(sanitizeSvg(svg));
  const fitTo = fitLongerSide(parse(clean), maxSidePx);
  const answer = await renderInChildProcess({ svg: clean, options: resvgOptions(fitTo) }, limits);
  if (!answer.ok) throw renderFailure(new Error(answer.message));
  return { png: answer.png, width: answer.width, height: answer.height };
}
