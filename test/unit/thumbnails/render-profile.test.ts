import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import sharp from 'sharp';
import { StageFailure, ValidationError } from '../../../src/index.ts';
import {
  DEFAULT_PROFILES,
  parseProfiles,
  renderProfile,
  TOOLCHAIN_DIGEST,
  TOOLCHAIN_VERSIONS,
  toolchainDigest,
  type RenderProfile,
} from '../../../src/pipelines/thumbnails/media/render-profile.ts';
import { decodePixels, isNear, pngWithAlpha } from '../../support/asset-fixtures.ts';

/** A normalized intermediate: an RGB PNG with a gradient (so resizing has work to do). */
async function intermediate(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) pixels.set([(i % width) % 256, Math.floor(i / width) % 256, 128], i * 3);
  return sharp(pixels, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

function validationProblems(raw: unknown): string[] {
  try {
    parseProfiles(raw);
  } catch (err) {
    assert.ok(err instanceof ValidationError, String(err));
    return ((err.details?.['problems'] ?? []) as Array<{ path: string }>).map((p) => p.path);
  }
  return assert.fail('expected a ValidationError');
}

describe('renderProfile', () => {
  test('the default profiles: thumb 128 PNG, preview 512 WebP, large 2048 WebP', () => {
    assert.deepEqual(
      DEFAULT_PROFILES.map((p) => [p.name, p.maxSidePx, p.format]),
      [
        ['thumb', 128, 'png'],
        ['preview', 512, 'webp'],
        ['large', 2048, 'webp'],
      ],
    );
  });

  test('fits inside the square keeping the aspect ratio, in the profile format, never enlarging', async () => {
    const source = await intermediate(600, 400);
    const expected = { thumb: [128, 85, 'png'], preview: [512, 341, 'webp'], large: [600, 400, 'webp'] };
    for (const profile of DEFAULT_PROFILES) {
      const out = await renderProfile(source, profile);
      const meta = await sharp(out.bytes).metadata();
      assert.deepEqual([out.width, out.height, meta.format], expected[profile.name as keyof typeof expected], profile.name);
      assert.deepEqual([meta.width, meta.height], [out.width, out.height]);
      assert.equal(out.mediaType, `image/${profile.format}`);
    }
    const portrait = await renderProfile(await intermediate(300, 900), { name: 'p', maxSidePx: 90, format: 'png' });
    assert.deepEqual([portrait.width, portrait.height], [30, 90]);
  });

  test('JPEG output flattens transparency onto white; PNG and WebP keep it', async () => {
    const alpha = await pngWithAlpha();
    const jpeg = await decodePixels((await renderProfile(alpha, { name: 'j', maxSidePx: 40, format: 'jpeg', quality: 90 })).bytes);
    assert.equal(jpeg.channels, 3);
    assert.ok(isNear(jpeg.at(35, 15), [255, 255, 255], 4), `transparent -> white: ${jpeg.at(35, 15)}`);
    assert.ok(isNear(jpeg.at(5, 15), [255, 0, 0], 30));
    const webp = await decodePixels((await renderProfile(alpha, { name: 'w', maxSidePx: 40, format: 'webp', quality: 80 })).bytes);
    assert.equal(webp.at(35, 15)[3], 0);
  });

  test('is deterministic for the same input and profile', async () => {
    const source = await intermediate(300, 200);
    for (const profile of DEFAULT_PROFILES) {
      assert.deepEqual(Buffer.from((await renderProfile(source, profile)).bytes), Buffer.from((await renderProfile(source, profile)).bytes), profile.name);
    }
  });

  test('refuses an intermediate that is not a PNG (permanent) and an invalid profile (ValidationError)', async () => {
    const jpeg = await sharp(await intermediate(10, 10)).jpeg().toBuffer();
    const err = await renderProfile(jpeg, DEFAULT_PROFILES[0] as RenderProfile).catch((e: unknown) => e);
    assert.ok(err instanceof StageFailure && err.code === 'ASSET_UNREADABLE' && err.errorClass === 'permanent');
    await assert.rejects(renderProfile(await intermediate(10, 10), { name: 'x', maxSidePx: 0, format: 'png' }), ValidationError);
    await assert.rejects(renderProfile(await intermediate(10, 10), { name: 'x', maxSidePx: 10, format: 'gif' as 'png' }), ValidationError);
  });
});

describe('parseProfiles', () => {
  test('reads a mapping of name to profile and fills in lossy qualities', () => {
    assert.deepEqual(parseProfiles({ thumb: { maxSidePx: 128, format: 'png' }, hero: { maxSidePx: 1600, format: 'jpeg' }, web: { maxSidePx: 800, format: 'webp', quality: 70 } }), [
      { name: 'thumb', maxSidePx: 128, format: 'png' },
      { name: 'hero', maxSidePx: 1600, format: 'jpeg', quality: 82 },
      { name: 'web', maxSidePx: 800, format: 'webp', quality: 70 },
    ]);
  });

  test('lists every problem at once, by path', () => {
    const problems = validationProblems({
      'Bad Name': { maxSidePx: 10, format: 'png' },
      zero: { maxSidePx: 0, format: 'png' },
      fmt: { maxSidePx: 10, format: 'gif' },
      lossless: { maxSidePx: 10, format: 'png', quality: 50 },
      q: { maxSidePx: 10, format: 'webp', quality: 101 },
      extra: { maxSidePx: 10, format: 'png', sharpen: true },
      scalar: 5,
    });
    assert.deepEqual(problems, ['Bad Name', 'zero.maxSidePx', 'fmt.format', 'lossless.quality', 'q.quality', 'extra.sharpen', 'scalar']);
  });

  test('refuses a section that is not a non-empty mapping', () => {
    assert.throws(() => parseProfiles([{ name: 'a' }]), ValidationError);
    assert.throws(() => parseProfiles(null), ValidationError);
    assert.deepEqual(validationProblems({}), ['']);
  });
});

describe('TOOLCHAIN_DIGEST', () => {
  test('is the sha256 of the toolchain versions and changes with any of them', () => {
    assert.match(TOOLCHAIN_DIGEST, /^[0-9a-f]{64}$/);
    assert.equal(toolchainDigest({ ...TOOLCHAIN_VERSIONS }), TOOLCHAIN_DIGEST);
    assert.equal(TOOLCHAIN_VERSIONS.sharp['sharp'], sharp.versions.sharp);
    assert.equal(TOOLCHAIN_VERSIONS.sharp['vips'], sharp.versions.vips);
    const variants = [
      { ...TOOLCHAIN_VERSIONS, sharp: { ...TOOLCHAIN_VERSIONS.sharp, vips: '0.0.0' } },
      { ...TOOLCHAIN_VERSIONS, sharp: { ...TOOLCHAIN_VERSIONS.sharp, sharp: '0.0.0' } },
      { ...TOOLCHAIN_VERSIONS, resvg: '0.0.0' },
      { ...TOOLCHAIN_VERSIONS, fonts: '0.0.0' },
      { ...TOOLCHAIN_VERSIONS, code: TOOLCHAIN_VERSIONS.code + 1 },
    ];
    for (const variant of variants) assert.notEqual(toolchainDigest(variant), TOOLCHAIN_DIGEST);
  });
});
