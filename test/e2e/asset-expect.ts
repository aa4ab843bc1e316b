/**
 * What a published profile of a corpus image must be: the profile's format (as sharp reads it
 * back, and as the Content-Type says), the upright picture fitted inside the profile's square
 * without enlarging, an ETag naming the bytes, and the image's own pixel checks.
 */
import sharp from 'sharp';
import { DEFAULT_PROFILES, type RenderProfile } from '../../src/pipelines/thumbnails/media/render-profile.ts';
import { decodePixels } from '../support/asset-fixtures.ts';
import type { CorpusImage } from './asset-corpus.ts';
import type { ProfileRead } from './asset-http.ts';
import { sha256Ref } from './asset-store-files.ts';

/** The profiles a server without a `profiles` setting renders. */
export const PROFILES: readonly Readonly<RenderProfile>[] = DEFAULT_PROFILES;

/** `upright` fitted inside a `side` square, never enlarged (unrounded). */
export function fittedSize(upright: { width: number; height: number }, side: number): { width: number; height: number } {
  const scale = Math.min(1, side / Math.max(upright.width, upright.height));
  return { width: upright.width * scale, height: upright.height * scale };
}

/** Problems of one profile read of one image (empty when it is right). */
export async function profileProblems(image: CorpusImage, profile: Readonly<RenderProfile>, read: ProfileRead): Promise<string[]> {
  const where = `${image.assetId}/${profile.name} (${image.kind})`;
  if (read.status !== 200) return [`${where}: GET answered ${read.status}`];
  const problems: string[] = [];
  if (read.contentType !== `image/${profile.format}`) problems.push(`content-type ${read.contentType}, want image/${profile.format}`);
  if (read.etag !== `"${sha256Ref(read.bytes).slice('sha256:'.length)}"`) problems.push(`etag ${read.etag} does not name the bytes`);
  const meta = await sharp(read.bytes).metadata();
  if (meta.format !== profile.format) problems.push(`format ${meta.format}, want ${profile.format}`);
  if ((meta.pages ?? 1) !== 1) problems.push(`${meta.pages} frames, want one`);
  if (meta.orientation !== undefined && meta.orientation !== 1) problems.push(`EXIF orientation ${meta.orientation} left in the output`);
  const want = fittedSize(image.upright, profile.maxSidePx);
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  // Rounding of the shorter side (and of an SVG's rasterized size) may differ by one pixel.
  if (Math.abs(width - want.width) > 1 || Math.abs(height - want.height) > 1) {
    problems.push(`${width}x${height}, want ${want.width.toFixed(1)}x${want.height.toFixed(1)}`);
  }
  if (Math.max(width, height) > profile.maxSidePx) problems.push(`${width}x${height} does not fit in ${profile.maxSidePx}`);
  problems.push(...image.pixels(await decodePixels(read.bytes)));
  return problems.map((p) => `${where}: ${p}`);
}
