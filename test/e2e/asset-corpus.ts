/**
 * The 50 real images of the asset end-to-end test, generated at test time from the shared
 * fixtures (test/support/asset-fixtures.ts): EXIF-rotated photos in all eight orientations (small,
 * and upscaled so the profiles really resize them), noisy photos of many sizes and aspect ratios,
 * PNG with alpha, animated GIF and WebP, SVG, CMYK JPEG, and WebP/AVIF/TIFF/GIF/PNG/JPEG solids;
 * a few are byte-identical copies under another asset id (one transform for both). Each comes
 * with how it is uploaded (raw body or multipart, a right or neutral Content-Type, sometimes a
 * misleading file name) and what its outputs must show.
 */
import sharp from 'sharp';
import {
  animatedGif,
  animatedWebp,
  cmykJpeg,
  isNear,
  orientedJpeg,
  orientedPictureColor,
  ORIENTED_PICTURE,
  photoJpeg,
  pngWithAlpha,
  simpleSvg,
  solidImage,
  type DecodedPixels,
  type Rgb,
} from '../support/asset-fixtures.ts';
import { UploadMode, type UploadRequest } from './asset-http.ts';

/** What every output of an image must show; returns the problems found (empty when fine). */
export type PixelCheck = (pixels: DecodedPixels) => string[];

/** One image of the corpus. */
export interface CorpusImage {
  assetId: string;
  /** What it is, for messages. */
  kind: string;
  bytes: Uint8Array;
  upload: UploadRequest;
  /** Size of the upright (EXIF-oriented) picture; for SVG the rasterized intermediate (longer side 2048). */
  upright: { width: number; height: number };
  pixels: PixelCheck;
}

/** Upscaling factor of the large orientation fixtures: 96x64 becomes 768x512 (bigger than `thumb` and `preview`). */
const ORIENTED_SCALE = 8;
/** Tolerance per channel for solid areas after lossy encodes (JPEG source, WebP output). */
const COLOR_TOLERANCE = 28;

function colorAt(p: DecodedPixels, fx: number, fy: number, want: Rgb, what: string): string[] {
  const x = Math.min(p.width - 1, Math.floor(p.width * fx));
  const y = Math.min(p.height - 1, Math.floor(p.height * fy));
  const got = p.at(x, y);
  return isNear(got, want, COLOR_TOLERANCE) ? [] : [`${what} at (${x},${y}) is ${got.join(',')}, want ${want.join(',')}`];
}

/** The four quadrants of the upright picture are where they belong (so EXIF orientation was applied). */
const uprightQuadrants: PixelCheck = (p) =>
  [
    [0.25, 0.25],
    [0.75, 0.25],
    [0.25, 0.75],
    [0.75, 0.75],
  ].flatMap(([fx = 0, fy = 0]) => colorAt(p, fx, fy, orientedPictureColor(fx * ORIENTED_PICTURE.width, fy * ORIENTED_PICTURE.height), 'quadrant'));

const solid =
  (color: Rgb): PixelCheck =>
  (p) =>
    colorAt(p, 0.5, 0.5, color, 'center');

/** Left half opaque red, right half fully transparent (alpha kept by PNG and WebP outputs). */
const halfTransparent: PixelCheck = (p) => {
  if (p.channels !== 4) return [`${p.channels} channels, want 4 (alpha kept)`];
  const left = p.at(Math.floor(p.width / 4), Math.floor(p.height / 2));
  const right = p.at(Math.floor((3 * p.width) / 4), Math.floor(p.height / 2));
  const problems: string[] = [];
  if (!isNear(left, [255, 0, 0], COLOR_TOLERANCE) || (left[3] ?? 0) < 250) problems.push(`left ${left.join(',')} is not opaque red`);
  if ((right[3] ?? 255) > 5) problems.push(`right ${right.join(',')} is not transparent`);
  return problems;
};

/** {@link simpleSvg}: the red square fills the left half. */
const svgRedLeft: PixelCheck = (p) => colorAt(p, 0.25, 0.5, [255, 0, 0], 'red square');

const anything: PixelCheck = () => [];

/** A fixture orientation JPEG scaled up (nearest neighbour keeps the quadrants exact), EXIF orientation kept. */
async function largeOrientedJpeg(orientation: number): Promise<Buffer> {
  const small = await orientedJpeg(orientation);
  const { width = 0, height = 0 } = await sharp(small).metadata();
  // `autoOrient: false` keeps the stored (unrotated) pixels; withMetadata writes the tag back.
  return sharp(small, { autoOrient: false })
    .resize(width * ORIENTED_SCALE, height * ORIENTED_SCALE, { kernel: 'nearest' })
    .jpeg({ quality: 92 })
    .withMetadata({ orientation })
    .toBuffer();
}

/** A larger half-transparent PNG, like {@link pngWithAlpha} at 800x600. */
async function largeAlphaPng(): Promise<Buffer> {
  return sharp(await pngWithAlpha()).resize(800, 600, { kernel: 'nearest' }).png().toBuffer();
}

/** A 600x400 CMYK JPEG of red. */
async function largeCmykJpeg(): Promise<Buffer> {
  return sharp({ create: { width: 600, height: 400, channels: 3, background: '#ff0000' } }).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer();
}

/** A tall SVG (150x450) with a red upper third. */
function tallSvg(): Buffer {
  return Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="150" height="450" viewBox="0 0 150 450">' +
      '<rect x="0" y="0" width="150" height="150" fill="#ff0000"/><circle cx="75" cy="300" r="60" fill="#0000ff"/></svg>',
  );
}

const raw = (contentType: string): UploadRequest => ({ mode: UploadMode.raw, contentType });
const multipart = (contentType: string, filename: string): UploadRequest => ({ mode: UploadMode.multipart, contentType, filename });

const RGB_OF: Readonly<Record<string, Rgb>> = { '#3366cc': [0x33, 0x66, 0xcc], '#cc6633': [0xcc, 0x66, 0x33] };

/** Builds the corpus (about a second). Asset ids are `<prefix>-<n>-<kind>`. */
export async function buildCorpus(prefix: string): Promise<CorpusImage[]> {
  const items: Omit<CorpusImage, 'assetId'>[] = [];
  const add = (kind: string, bytes: Uint8Array, upload: UploadRequest, upright: CorpusImage['upright'], pixels: PixelCheck): void =>
    void items.push({ kind, bytes, upload, upright, pixels });
  const { width: ow, height: oh } = ORIENTED_PICTURE;
  for (let orientation = 1; orientation <= 8; orientation++) {
    const small = await orientedJpeg(orientation);
    add(`exif${orientation}-small`, small, orientation % 2 ? raw('image/jpeg') : multipart('image/jpeg', `IMG_000${orientation}.JPG`), { width: ow, height: oh }, uprightQuadrants);
    const large = await largeOrientedJpeg(orientation);
    const upright = { width: ow * ORIENTED_SCALE, height: oh * ORIENTED_SCALE };
    add(`exif${orientation}-large`, large, orientation % 2 ? multipart('image/jpeg', `DSC_${orientation}.jpeg`) : raw('application/octet-stream'), upright, uprightQuadrants);
  }
  const photoSizes: [number, number][] = [[640, 480], [1024, 768], [1600, 1200], [300, 2000], [2000, 300], [128, 128], [513, 257], [1000, 999]];
  for (const [i, [w, h]] of photoSizes.entries()) {
    add(`photo-${w}x${h}`, await photoJpeg(w, h), i % 2 ? multipart('image/jpeg', `photo${i}.jpg`) : raw('image/jpeg'), { width: w, height: h }, anything);
  }
  add('alpha-small', await pngWithAlpha(), raw('image/png'), { width: 40, height: 30 }, halfTransparent);
  add('alpha-large', await largeAlphaPng(), multipart('image/png', 'alpha.png'), { width: 800, height: 600 }, halfTransparent);
  add('animated-gif', await animatedGif(), raw('image/gif'), { width: 32, height: 24 }, solid([255, 0, 0]));
  add('animated-webp', await animatedWebp(), multipart('image/webp', 'anim.webp'), { width: 32, height: 24 }, solid([255, 0, 0]));
  add('svg-wide', simpleSvg(), raw('image/svg+xml'), { width: 2048, height: 1024 }, svgRedLeft);
  add('svg-wide-multipart', Buffer.concat([simpleSvg(), Buffer.from('\n<!-- multipart copy -->\n')]), multipart('image/svg+xml', 'logo.svg'), { width: 2048, height: 1024 }, svgRedLeft);
  add('svg-tall', tallSvg(), raw('application/octet-stream'), { width: 683, height: 2048 }, (p) => colorAt(p, 0.5, 1 / 6, [255, 0, 0], 'red top'));
  add('cmyk-small', await cmykJpeg(), raw('image/jpeg'), { width: 48, height: 32 }, solid([255, 0, 0]));
  add('cmyk-large', await largeCmykJpeg(), multipart('image/jpeg', 'print.jpg'), { width: 600, height: 400 }, solid([255, 0, 0]));
  const formats = ['png', 'jpeg', 'webp', 'gif', 'avif', 'tiff'] as const;
  for (const [i, format] of formats.entries()) {
    const type = format === 'jpeg' ? 'image/jpeg' : `image/${format}`;
    add(`${format}-solid-small`, await solidImage(format, '#3366cc'), i % 2 ? raw(type) : multipart(type, `solid.${format}`), { width: 60, height: 40 }, solid(RGB_OF['#3366cc'] ?? [0, 0, 0]));
    // A misleading file name is fine: the bytes decide.
    add(`${format}-solid-large`, await solidImage(format, '#cc6633', 900, 300), i % 2 ? multipart('application/octet-stream', 'picture.gif') : raw(type), { width: 900, height: 300 }, solid(RGB_OF['#cc6633'] ?? [0, 0, 0]));
  }
  const png16 = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#3366cc' } }).toColourspace('rgb16').png().toBuffer();
  add('png-16bit', png16, raw('image/png'), { width: 300, height: 200 }, solid(RGB_OF['#3366cc'] ?? [0, 0, 0]));
  const gray = await sharp({ create: { width: 400, height: 640, channels: 3, background: '#808080' } }).greyscale().jpeg().toBuffer();
  add('gray-jpeg', gray, multipart('image/jpeg', 'scan.jpg'), { width: 400, height: 640 }, solid([128, 128, 128]));
  // Byte-identical copies under other ids: the same source checksum, so transform runs once per pair.
  for (const kind of ['photo-1024x768', 'exif6-large', 'alpha-large']) {
    const original = items.find((i) => i.kind === kind);
    if (original) items.push({ ...original, kind: `${kind}-copy`, upload: original.upload.mode === UploadMode.raw ? multipart(original.upload.contentType, 'copy') : raw(original.upload.contentType) });
  }
  return items.map((item, n) => ({ ...item, assetId: `${prefix}-${String(n).padStart(2, '0')}-${item.kind}` }));
}
