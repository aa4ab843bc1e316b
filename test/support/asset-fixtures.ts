/**
 * Real test images, generated with sharp at test time (no binary files in the repository), and
 * the bad inputs the thumbnails pipeline must refuse. Every generator is deterministic: the same
 * call gives the same bytes (for a given sharp build).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';

/** An 8-bit RGB color. */
export type Rgb = readonly [number, number, number];

/**
 * The upright picture every orientation fixture shows once EXIF orientation is applied: 96x64
 * (landscape, so a missing rotation shows in the dimensions too), each quadrant one color.
 */
export const ORIENTED_PICTURE = Object.freeze({
  width: 96,
  height: 64,
  topLeft: [230, 20, 20] as Rgb,
  topRight: [20, 200, 20] as Rgb,
  bottomLeft: [20, 20, 230] as Rgb,
  bottomRight: [240, 240, 240] as Rgb,
});

/** The color of the upright picture at (x, y). */
export function orientedPictureColor(x: number, y: number): Rgb {
  const { width, height } = ORIENTED_PICTURE;
  const left = x < width / 2;
  if (y < height / 2) return left ? ORIENTED_PICTURE.topLeft : ORIENTED_PICTURE.topRight;
  return left ? ORIENTED_PICTURE.bottomLeft : ORIENTED_PICTURE.bottomRight;
}

/**
 * Where stored pixel (x, y) appears in the displayed picture, for each EXIF orientation (TIFF 6.0
 * tag 274: 2 mirror, 3 rotate 180, 4 flip, 5 transpose, 6 rotate 90 CW, 7 transverse, 8 rotate 270 CW).
 */
function displayedAt(orientation: number, x: number, y: number): [number, number] {
  const { width: w, height: h } = ORIENTED_PICTURE;
  switch (orientation) {
    case 2: return [w - 1 - x, y];
    case 3: return [w - 1 - x, h - 1 - y];
    case 4: return [x, h - 1 - y];
    case 5: return [y, x];
    case 6: return [w - 1 - y, x];
    case 7: return [w - 1 - y, h - 1 - x];
    case 8: return [y, h - 1 - x];
    default: return [x, y];
  }
}

/**
 * A JPEG whose stored pixels, shown with EXIF orientation `orientation` (1-8), are
 * {@link ORIENTED_PICTURE}. Orientations 5-8 store the picture transposed (64x96).
 */
export async function orientedJpeg(orientation: number): Promise<Buffer> {
  const transposed = orientation >= 5;
  const storedWidth = transposed ? ORIENTED_PICTURE.height : ORIENTED_PICTURE.width;
  const storedHeight = transposed ? ORIENTED_PICTURE.width : ORIENTED_PICTURE.height;
  const pixels = Buffer.alloc(storedWidth * storedHeight * 3);
  for (let y = 0; y < storedHeight; y++) {
    for (let x = 0; x < storedWidth; x++) {
      const [dx, dy] = displayedAt(orientation, x, y);
      pixels.set(orientedPictureColor(dx, dy), (y * storedWidth + x) * 3);
    }
  }
  return sharp(pixels, { raw: { width: storedWidth, height: storedHeight, channels: 3 } })
    .jpeg({ quality: 95 })
    .withMetadata({ orientation })
    .toBuffer();
}

/** A photo-like JPEG (smooth gradients plus deterministic noise), e.g. 2000x1500 for timings. */
export async function photoJpeg(width: number, height: number, quality = 88): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  let seed = 0x2545f491;
  for (let i = 0, p = 0; i < width * height; i++, p += 3) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; // LCG: same noise every run
    const x = i % width;
    const y = Math.floor(i / width);
    const noise = (seed >>> 24) % 24;
    pixels[p] = Math.floor((255 * x) / width) ^ noise;
    pixels[p + 1] = Math.floor((255 * y) / height) ^ noise;
    pixels[p + 2] = Math.floor((255 * (x + y)) / (width + height)) ^ noise;
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality }).toBuffer();
}

/** 40x30 RGBA PNG: left half opaque red, right half fully transparent. */
export async function pngWithAlpha(): Promise<Buffer> {
  const width = 40;
  const height = 30;
  const pixels = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) if (i % width < width / 2) pixels.set([255, 0, 0, 255], i * 4);
  return sharp(pixels, { raw: { width, height, channels: 4 } }).png().toBuffer();
}

/** Solid-color frames of 32x24, one per color. */
async function frames(colors: readonly string[]): Promise<Buffer[]> {
  return Promise.all(colors.map((background) => sharp({ create: { width: 32, height: 24, channels: 4, background } }).png().toBuffer()));
}

/** The frame colors of {@link animatedGif} and {@link animatedWebp}; the first is red. */
export const ANIMATION_COLORS: readonly string[] = Object.freeze(['#ff0000', '#00ff00', '#0000ff', '#ffff00']);

/** A 32x24 animated GIF, one frame per {@link ANIMATION_COLORS} color. */
export async function animatedGif(): Promise<Buffer> {
  return sharp(await frames(ANIMATION_COLORS), { join: { animated: true } }).gif({ loop: 0, delay: 100 }).toBuffer();
}

/** A 32x24 animated WebP, one frame per {@link ANIMATION_COLORS} color. */
export async function animatedWebp(): Promise<Buffer> {
  return sharp(await frames(ANIMATION_COLORS), { join: { animated: true } }).webp({ loop: 0, delay: 100, lossless: true }).toBuffer();
}

/** A 48x32 CMYK JPEG of pure red (as sharp converts sRGB red to CMYK). */
export async function cmykJpeg(): Promise<Buffer> {
  return sharp({ create: { width: 48, height: 32, channels: 3, background: '#ff0000' } }).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer();
}

/** A solid 60x40 image of `color` in one of sharp's output formats. */
export async function solidImage(format: 'png' | 'jpeg' | 'webp' | 'gif' | 'avif' | 'tiff', color = '#3366cc', width = 60, height = 40): Promise<Buffer> {
  const image = sharp({ create: { width, height, channels: 3, background: color } });
  // AVIF and WebP lossless keep the color exact enough to check; defaults elsewhere.
  if (format === 'avif') return image.avif({ lossless: true }).toBuffer();
  if (format === 'webp') return image.webp({ lossless: true }).toBuffer();
  return image.toFormat(format).toBuffer();
}

/**
 * A small SVG (about 17 KB) that takes minutes of CPU to rasterize: 200 full-canvas rects on a
 * 4000x4000 canvas, each through `feGaussianBlur stdDeviation=1000`. The render budget exists
 * for drawings like this one.
 */
export function blurBombSvg(): Buffer {
  let rects = '';
  for (let i = 0; i < 200; i++) {
    const color = ((i * 1_234_567) % 0xffffff).toString(16).padStart(6, '0');
    rects += `<rect x="0" y="0" width="4000" height="4000" fill="#${color}" filter="url(#b)"/>`;
  }
  return Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="4000">' +
      `<defs><filter id="b"><feGaussianBlur stdDeviation="1000"/></filter></defs>${rects}</svg>`,
  );
}

/** A small, benign SVG: 200x100, a red rectangle on the left half and a line of text. */
export function simpleSvg(): Buffer {
  return Buffer.from(
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
      '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100">' +
      '<rect x="0" y="0" width="100" height="100" fill="#ff0000"/>' +
      '<text x="110" y="60" font-family="Helvetica" font-size="30" fill="#000000">Hi</text>' +
      '</svg>',
  );
}

/** A JPEG cut off in the middle of its scan data (header intact, pixels missing). */
export async function truncatedJpeg(): Promise<Buffer> {
  const whole = await photoJpeg(256, 192);
  return whole.subarray(0, Math.floor(whole.length / 2));
}

/** An empty file. */
export function zeroBytes(): Buffer {
  return Buffer.alloc(0);
}

/** A plain text file (the kind that arrives named `photo.png`). */
export function textFile(): Buffer {
  return Buffer.from('This is not an image, whatever its name says.\n');
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A well-formed PNG whose header claims `width` x `height` (default 50000x50000, 2.5 gigapixels):
 * valid signature, IHDR, IDAT and IEND with correct CRCs, but only one row of image data. A
 * decoder that trusts the header would allocate ~7.5 GB; it must be refused before decoding.
 */
export function pngBombHeader(width = 50_000, height = 50_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, adaptive filtering, no interlace
  const firstRow = deflateSync(Buffer.alloc(1 + width * 3));
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', firstRow), pngChunk('IEND', new Uint8Array(0))]);
}

/** A unique color no other fixture uses, for proving a referenced local file never shows up. */
export const SECRET_COLOR: Rgb = Object.freeze([19, 247, 161]) as Rgb;

/** Writes a 64x64 PNG of {@link SECRET_COLOR} into `dir` and returns its absolute path. */
export async function writeSecretPng(dir: string): Promise<string> {
  const path = join(dir, 'secret.png');
  const [r, g, b] = SECRET_COLOR;
  await writeFile(path, await sharp({ create: { width: 64, height: 64, channels: 3, background: { r, g, b } } }).png().toBuffer());
  return path;
}

/** Where the hostile SVG points. */
export interface HostileSvgTargets {
  /** An http(s) URL (point it at a local server to observe connection attempts). */
  remoteUrl: string;
  /** An absolute path of a local image file (e.g. from {@link writeSecretPng}). */
  localPath: string;
}

/**
 * A 100x100 SVG that tries everything at once: `<script>`, event handlers, `<foreignObject>`,
 * remote and local `<image href>` (xlink and SVG 2, absolute, `file:` URL, relative), CSS
 * `@import` and `url()` to the remote server, a processing-instruction stylesheet. Each image
 * covers the whole canvas, so any reference that loads shows its pixels. A visible blue square
 * at (0,0)-(20,20) proves the safe part still renders.
 */
export function hostileSvg({ remoteUrl, localPath }: HostileSvgTargets): Buffer {
  const fileUrl = `file://${localPath}`;
  const relative = `../../../../../../../..${localPath}`;
  return Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<?xml-stylesheet href="${remoteUrl}/sheet.css"?>\n` +
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:h="http://www.w3.org/1999/xhtml" width="100" height="100" onload="alert(1)">` +
      `<style>@import url("${remoteUrl}/import.css"); rect.bg { fill: url(${remoteUrl}/paint.svg#p) }</style>` +
      `<script type="text/javascript">fetch("${remoteUrl}/script")</script>` +
      `<image x="0" y="0" width="100" height="100" href="${remoteUrl}/remote.png"/>` +
      `<image x="0" y="0" width="100" height="100" xlink:href="${localPath}"/>` +
      `<image x="0" y="0" width="100" height="100" href="${fileUrl}"/>` +
      `<image x="0" y="0" width="100" height="100" xlink:href="${relative}"/>` +
      `<foreignObject width="100" height="100"><h:img src="${localPath}"/></foreignObject>` +
      `<rect class="bg" x="0" y="0" width="20" height="20" fill="#0000ff" onclick="alert(2)" style="stroke: url(${remoteUrl}/s.svg)"/>` +
      `</svg>`,
  );
}

/** Decoded pixels of an image, for assertions. */
export interface DecodedPixels {
  width: number;
  height: number;
  channels: number;
  /** The channel values at (x, y). */
  at(x: number, y: number): number[];
  /** True when some pixel is within `tolerance` (per channel) of `color`. */
  contains(color: Rgb, tolerance?: number): boolean;
}

/** Decodes any image sharp reads (first frame) into raw pixels. */
export async function decodePixels(bytes: Uint8Array): Promise<DecodedPixels> {
  const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
  const { width, height, channels } = info;
  const at = (x: number, y: number): number[] => [...data.subarray((y * width + x) * channels, (y * width + x + 1) * channels)];
  const contains = (color: Rgb, tolerance = 8): boolean => {
    for (let p = 0; p < data.length; p += channels) {
      if (color.every((c, i) => Math.abs((data[p + i] ?? -999) - c) <= tolerance)) return true;
    }
    return false;
  };
  return { width, height, channels, at, contains };
}

/** True when `actual` (first three channels) is within `tolerance` of `expected`. */
export function isNear(actual: readonly number[], expected: Rgb, tolerance = 24): boolean {
  return expected.every((c, i) => Math.abs((actual[i] ?? -999) - c) <= tolerance);
}
