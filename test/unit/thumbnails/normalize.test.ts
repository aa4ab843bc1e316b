import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import sharp from 'sharp';
import { StageFailure } from '../../../src/index.ts';
import { blockSharpSvgLoader, normalizeImage, type NormalizedImage } from '../../../src/pipelines/thumbnails/media/normalize.ts';
import { inspectAsset, type AssetInfo } from '../../../src/pipelines/thumbnails/media/sniff.ts';
import {
  animatedGif,
  animatedWebp,
  cmykJpeg,
  decodePixels,
  isNear,
  ORIENTED_PICTURE,
  orientedJpeg,
  pngBombHeader,
  pngWithAlpha,
  simpleSvg,
  solidImage,
  truncatedJpeg,
} from '../../support/asset-fixtures.ts';

const MAX_PIXELS = 50_000_000;

async function normalize(bytes: Uint8Array, maxPixels = MAX_PIXELS): Promise<NormalizedImage> {
  const info = await inspectAsset(bytes, { maxBytes: 1 << 26, maxPixels: MAX_PIXELS, totalBytes: bytes.byteLength });
  return normalizeImage(bytes, info, { maxPixels });
}

async function failsWith(promise: Promise<unknown>, code: string): Promise<StageFailure> {
  const err = await promise.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof StageFailure && err.code === code && err.errorClass === 'permanent', String(err));
  return err;
}

describe('normalizeImage', () => {
  for (let orientation = 1; orientation <= 8; orientation++) {
    test(`applies EXIF orientation ${orientation}: the picture comes out upright`, async () => {
      const out = await normalize(await orientedJpeg(orientation));
      const pixels = await decodePixels(out.bytes);
      assert.deepEqual([out.width, out.height, pixels.width, pixels.height], [96, 64, 96, 64]);
      const { topLeft, topRight, bottomLeft, bottomRight } = ORIENTED_PICTURE;
      assert.ok(isNear(pixels.at(12, 12), topLeft), `top left ${pixels.at(12, 12)}`);
      assert.ok(isNear(pixels.at(84, 12), topRight), `top right ${pixels.at(84, 12)}`);
      assert.ok(isNear(pixels.at(12, 52), bottomLeft), `bottom left ${pixels.at(12, 52)}`);
      assert.ok(isNear(pixels.at(84, 52), bottomRight), `bottom right ${pixels.at(84, 52)}`);
    });
  }

  test('outputs an 8-bit sRGB PNG without metadata', async () => {
    const out = await normalize(await orientedJpeg(6));
    assert.equal(out.mediaType, 'image/png');
    const meta = await sharp(out.bytes).metadata();
    assert.deepEqual([meta.format, meta.space, meta.depth, meta.channels], ['png', 'srgb', 'uchar', 3]);
    assert.equal(meta.exif, undefined, 'no EXIF');
    assert.equal(meta.icc, undefined, 'no ICC profile');
    assert.equal(meta.orientation, undefined, 'no orientation tag left');
  });

  test('keeps alpha', async () => {
    const pixels = await decodePixels((await normalize(await pngWithAlpha())).bytes);
    assert.equal(pixels.channels, 4);
    assert.deepEqual(pixels.at(5, 5), [255, 0, 0, 255]);
    assert.equal(pixels.at(35, 5)[3], 0);
  });

  test('takes the first frame of animated GIF and WebP', async () => {
    for (const bytes of [await animatedGif(), await animatedWebp()]) {
      const out = await normalize(bytes);
      assert.deepEqual([out.width, out.height], [32, 24], 'one frame, not a strip of four');
      const pixels = await decodePixels(out.bytes);
      assert.ok(isNear(pixels.at(16, 12), [255, 0, 0], 4), `first frame is red: ${pixels.at(16, 12)}`);
    }
  });

  test('converts CMYK JPEG to sRGB', async () => {
    const source = await sharp(await cmykJpeg()).metadata();
    assert.deepEqual([source.space, source.channels], ['cmyk', 4]);
    const pixels = await decodePixels((await normalize(await cmykJpeg())).bytes);
    assert.equal(pixels.channels, 3);
    assert.ok(isNear(pixels.at(24, 16), [255, 0, 0], 40), `red stays red: ${pixels.at(24, 16)}`);
  });

  test('decodes WebP, AVIF, TIFF, GIF and 16-bit PNG into 8-bit sRGB', async () => {
    for (const format of ['webp', 'avif', 'tiff', 'gif'] as const) {
      const pixels = await decodePixels((await normalize(await solidImage(format, '#3366cc'))).bytes);
      assert.ok(isNear(pixels.at(30, 20), [0x33, 0x66, 0xcc], 12), `${format}: ${pixels.at(30, 20)}`);
    }
    const deep = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).toColourspace('rgb16').png().toBuffer();
    assert.equal((await sharp(deep).metadata()).depth, 'ushort');
    assert.equal((await sharp((await normalize(deep)).bytes).metadata()).depth, 'uchar');
  });

  test('rasterizes SVG (never through sharp) at 2048 px, or less when the pixel budget says so', async () => {
    const out = await normalize(simpleSvg());
    assert.deepEqual([out.width, out.height], [2048, 1024]);
    const small = await normalize(simpleSvg(), 10_000);
    assert.deepEqual([small.width, small.height], [100, 50]);
  });

  test('is deterministic', async () => {
    const bytes = await orientedJpeg(3);
    assert.deepEqual(Buffer.from((await normalize(bytes)).bytes), Buffer.from((await normalize(bytes)).bytes));
  });

  test('a JPEG truncated in its pixel data is ASSET_UNREADABLE', async () => {
    await failsWith(normalize(await truncatedJpeg()), 'ASSET_UNREADABLE');
  });

  test('sharp gets an explicit pixel limit: a 15000x15000 header is refused without decoding, even without inspect', async () => {
    const bomb = pngBombHeader(15_000, 15_000);
    const info: AssetInfo = { format: 'png', mediaType: 'image/png', width: 15_000, height: 15_000 };
    await failsWith(normalizeImage(bomb, info, { maxPixels: MAX_PIXELS }), 'ASSET_TOO_MANY_PIXELS');
    const picture = await orientedJpeg(1);
    await failsWith(normalize(picture, 96 * 64 - 1), 'ASSET_TOO_MANY_PIXELS');
  });

  test('bytes that are not the inspected format never reach sharp, and sharp refuses SVG anyway', async () => {
    const svg = simpleSvg();
    const claimed: AssetInfo = { format: 'png', mediaType: 'image/png', width: 200, height: 100 };
    const err = await failsWith(normalizeImage(svg, claimed, { maxPixels: MAX_PIXELS }), 'ASSET_UNREADABLE');
    assert.equal(err.details?.['reason'], 'format-changed');
    // normalizeImage blocks libvips' SVG loader for the whole process (here: explicitly, test order aside).
    blockSharpSvgLoader();
    await assert.rejects(sharp(svg).png().toBuffer(), /unsupported image format|blocked/i);
  });
});
