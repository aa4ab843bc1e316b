import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { StageFailure } from '../../../src/index.ts';
import { INSPECT_HEAD_BYTES, inspectAsset, sniffFormat, type InspectOptions } from '../../../src/pipelines/thumbnails/media/sniff.ts';
import { looksLikeSvg } from '../../../src/pipelines/thumbnails/media/svg-detect.ts';
import {
  animatedGif,
  animatedWebp,
  cmykJpeg,
  orientedJpeg,
  pngBombHeader,
  pngWithAlpha,
  simpleSvg,
  solidImage,
  textFile,
  truncatedJpeg,
  zeroBytes,
} from '../../support/asset-fixtures.ts';

const LIMITS = { maxBytes: 10 * 1024 * 1024, maxPixels: 40_000_000 };

function optionsFor(bytes: Uint8Array, extra: Partial<InspectOptions> = {}): InspectOptions {
  return { ...LIMITS, totalBytes: bytes.byteLength, ...extra };
}

/** Asserts `promise` rejects with a permanent StageFailure of `code`; returns it for more checks. */
async function rejectsPermanently(promise: Promise<unknown>, code: string): Promise<StageFailure> {
  const err = await promise.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof StageFailure, `a StageFailure, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  assert.equal(err.errorClass, 'permanent');
  assert.equal(err.retryable, false);
  return err;
}

describe('inspectAsset: formats and dimensions from the bytes', () => {
  const cases = [
    ['png', 'image/png'],
    ['jpeg', 'image/jpeg'],
    ['webp', 'image/webp'],
    ['gif', 'image/gif'],
    ['avif', 'image/avif'],
    ['tiff', 'image/tiff'],
  ] as const;
  for (const [format, mediaType] of cases) {
    test(`a ${format} is recognized with its header dimensions`, async () => {
      const bytes = await solidImage(format, '#3366cc', 60, 40);
      assert.deepEqual(await inspectAsset(bytes, optionsFor(bytes)), { format, mediaType, width: 60, height: 40 });
    });
  }

  test('an SVG is recognized and measured from its sanitized document', async () => {
    const bytes = simpleSvg();
    assert.deepEqual(await inspectAsset(bytes, optionsFor(bytes)), { format: 'svg', mediaType: 'image/svg+xml', width: 200, height: 100 });
  });

  test('JPEG EXIF orientation is reported with the stored (unrotated) dimensions', async () => {
    const bytes = await orientedJpeg(6);
    const info = await inspectAsset(bytes, optionsFor(bytes));
    assert.equal(info.orientation, 6);
    assert.deepEqual([info.width, info.height], [64, 96]);
  });

  test('frames of animated GIF and WebP are counted', async () => {
    for (const bytes of [await animatedGif(), await animatedWebp()]) {
      const info = await inspectAsset(bytes, optionsFor(bytes));
      assert.equal(info.pages, 4, info.format);
      assert.deepEqual([info.width, info.height], [32, 24]);
    }
  });

  test('PNG with alpha and CMYK JPEG are accepted as they are', async () => {
    const png = await pngWithAlpha();
    assert.equal((await inspectAsset(png, optionsFor(png))).format, 'png');
    const cmyk = await cmykJpeg();
    assert.equal((await inspectAsset(cmyk, optionsFor(cmyk))).format, 'jpeg');
  });

  test('a TIFF whose IFD lies past the head is measured through readAt, and is unreadable without it', async () => {
    // Uncompressed 1600x1000 RGB: 4.8 MB of pixels before libvips writes the IFD.
    const whole = await sharp({ create: { width: 1600, height: 1000, channels: 3, background: '#808080' } }).tiff({ compression: 'none' }).toBuffer();
    const ifdOffset = whole.readUInt32LE(4);
    assert.ok(ifdOffset > INSPECT_HEAD_BYTES, 'the IFD lies past the head');
    const head = whole.subarray(0, INSPECT_HEAD_BYTES);
    const reads: Array<[number, number]> = [];
    const readAt = async (offset: number, length: number): Promise<Uint8Array> => {
      reads.push([offset, length]);
      return whole.subarray(offset, offset + length);
    };
    const options = { ...LIMITS, totalBytes: whole.byteLength };
    assert.deepEqual(await inspectAsset(head, { ...options, readAt }), { format: 'tiff', mediaType: 'image/tiff', width: 1600, height: 1000 });
    assert.deepEqual(reads, [[ifdOffset, whole.byteLength - ifdOffset]], 'one read, of the IFD only');
    await rejectsPermanently(inspectAsset(head, options), 'ASSET_UNREADABLE');
  });

  test('a head shorter than min(totalBytes, INSPECT_HEAD_BYTES) is a caller error, not an asset error', async () => {
    const png = await solidImage('png');
    const err = await inspectAsset(png.subarray(0, 10), optionsFor(png)).catch((e: unknown) => e);
    assert.ok(err instanceof Error && !(err instanceof StageFailure));
  });
});

describe('inspectAsset: refusals', () => {
  test('zero bytes are ASSET_UNREADABLE', async () => {
    await rejectsPermanently(inspectAsset(zeroBytes(), optionsFor(zeroBytes())), 'ASSET_UNREADABLE');
  });

  test('a text file (whatever its name) is ASSET_UNSUPPORTED_FORMAT', async () => {
    const err = await rejectsPermanently(inspectAsset(textFile(), optionsFor(textFile(), { declaredType: 'application/octet-stream' })), 'ASSET_UNSUPPORTED_FORMAT');
    assert.deepEqual(err.details, { detected: null });
  });

  test('a recognized but unaccepted format names what was detected', async () => {
    const pdf = Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n', 'latin1');
    const err = await rejectsPermanently(inspectAsset(pdf, optionsFor(pdf)), 'ASSET_UNSUPPORTED_FORMAT');
    assert.equal(err.details?.['detected'], 'application/pdf');
  });

  test('a 50000x50000 PNG header is refused as ASSET_TOO_MANY_PIXELS before any decoding', async () => {
    const bomb = pngBombHeader();
    // A well-formed PNG as far as headers go: every chunk's CRC is right, and sharp reads its header.
    for (let at = 8; at < bomb.length; ) {
      const length = bomb.readUInt32BE(at);
      assert.equal(bomb.readUInt32BE(at + 8 + length), crc32(bomb.subarray(at + 4, at + 8 + length)), `CRC of chunk at ${at}`);
      at += 12 + length;
    }
    const meta = await sharp(bomb, { limitInputPixels: false }).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['png', 50_000, 50_000]);
    const err = await rejectsPermanently(inspectAsset(bomb, optionsFor(bomb)), 'ASSET_TOO_MANY_PIXELS');
    assert.deepEqual([err.details?.['width'], err.details?.['height'], err.details?.['pixels']], [50_000, 50_000, 2_500_000_000]);
  });

  test('frames count towards the pixel limit', async () => {
    const gif = await animatedGif(); // 32x24 x 4 frames = 3072 pixels
    await rejectsPermanently(inspectAsset(gif, { ...optionsFor(gif), maxPixels: 3000 }), 'ASSET_TOO_MANY_PIXELS');
    assert.equal((await inspectAsset(gif, { ...optionsFor(gif), maxPixels: 3072 })).pages, 4);
  });

  test('more bytes than maxBytes is ASSET_TOO_LARGE', async () => {
    const png = await solidImage('png');
    const err = await rejectsPermanently(inspectAsset(png, { ...optionsFor(png), maxBytes: png.byteLength - 1 }), 'ASSET_TOO_LARGE');
    assert.equal(err.details?.['limitBytes'], png.byteLength - 1);
  });

  test('a header cut short is ASSET_UNREADABLE', async () => {
    const jpeg = await orientedJpeg(1);
    for (const length of [3, 40, 150]) {
      const cut = jpeg.subarray(0, length);
      await rejectsPermanently(inspectAsset(cut, optionsFor(cut)), 'ASSET_UNREADABLE');
    }
    const png = (await solidImage('png')).subarray(0, 20);
    await rejectsPermanently(inspectAsset(png, optionsFor(png)), 'ASSET_UNREADABLE');
  });

  test('a JPEG truncated in its pixel data passes inspection (its header is intact)', async () => {
    const bytes = await truncatedJpeg();
    assert.equal((await inspectAsset(bytes, optionsFor(bytes))).format, 'jpeg');
  });
});

describe('inspectAsset: declared Content-Type', () => {
  test('a matching declared type is accepted, parameters and case ignored', async () => {
    const png = await solidImage('png');
    for (const declaredType of ['image/png', 'IMAGE/PNG; charset=binary', ' image/png ', 'application/octet-stream', '']) {
      assert.equal((await inspectAsset(png, optionsFor(png, { declaredType }))).format, 'png', declaredType);
    }
    const jpeg = await solidImage('jpeg');
    assert.equal((await inspectAsset(jpeg, optionsFor(jpeg, { declaredType: 'image/jpg' }))).format, 'jpeg');
    const svg = simpleSvg();
    assert.equal((await inspectAsset(svg, optionsFor(svg, { declaredType: 'image/svg+xml; charset=utf-8' }))).format, 'svg');
  });

  test('a contradicting declared type is ASSET_TYPE_MISMATCH', async () => {
    const jpeg = await solidImage('jpeg');
    const err = await rejectsPermanently(inspectAsset(jpeg, optionsFor(jpeg, { declaredType: 'image/png' })), 'ASSET_TYPE_MISMATCH');
    assert.deepEqual(err.details, { declared: 'image/png', detected: 'image/jpeg' });
    const svg = simpleSvg();
    await rejectsPermanently(inspectAsset(svg, optionsFor(svg, { declaredType: 'text/plain' })), 'ASSET_TYPE_MISMATCH');
  });
});

describe('format sniffing', () => {
  test('SVG is detected after a BOM, XML declaration, comments, PI and DOCTYPE', () => {
    const prologue = '\ufeff<?xml version="1.0"?>\n<!-- made by hand -->\n<?foo bar?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd" [ <!ENTITY a "b"> ]>\n  ';
    assert.equal(looksLikeSvg(Buffer.from(`${prologue}<svg xmlns="http://www.w3.org/2000/svg"/>`)), true);
    assert.equal(looksLikeSvg(Buffer.from('<svg>')), true);
    assert.equal(looksLikeSvg(Buffer.from('<s:svg xmlns:s="http://www.w3.org/2000/svg"/>')), true);
  });

  test('other XML, HTML and text are not SVG', () => {
    for (const text of ['<?xml version="1.0"?><html/>', '<svgfoo/>', '<!-- <svg> -->', 'hello <svg>', '<html><svg/></html>']) {
      assert.equal(looksLikeSvg(Buffer.from(text)), false, text);
    }
  });

  test('the head length covers the SVG limit', async () => {
    const { SVG_MAX_BYTES } = await import('../../../src/pipelines/thumbnails/media/svg-sanitize.ts');
    assert.ok(INSPECT_HEAD_BYTES >= SVG_MAX_BYTES);
    assert.deepEqual(await sniffFormat(await solidImage('webp')), { format: 'webp' });
  });
});
