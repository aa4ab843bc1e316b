/**
 * The render step: one output per profile from the normalized PNG, fitted inside the profile's
 * square (aspect ratio kept, never enlarged), with fixed encoder options so the same input and
 * toolchain give the same bytes. Also the profile list of `kiln.yaml`, and the toolchain digest
 * that goes into every cache key of transform and render.
 */
import { createRequire } from 'node:module';
import sharp, { type Sharp } from 'sharp';
import { canonicalJson, sha256Hex, ValidationError } from '../../../index.ts';
import { assetFailure } from './asset-failure.ts';

/** Output formats of a profile. */
export const ProfileFormat = { png: 'png', webp: 'webp', jpeg: 'jpeg' } as const;
/** One of {@link ProfileFormat}'s values. */
export type ProfileFormat = (typeof ProfileFormat)[keyof typeof ProfileFormat];

/** One output profile. */
export interface RenderProfile {
  /** Name used in URLs and publications: lower-case letters, digits, `-` and `_`, at most 32. */
  name: string;
  /** The output fits in a square of this side, in pixels (1-8192). */
  maxSidePx: number;
  format: ProfileFormat;
  /** Encoder quality 1-100 for webp and jpeg (filled in by {@link parseProfiles}); absent for png. */
  quality?: number;
}

/** A rendered profile output. */
export interface RenderedProfile {
  bytes: Uint8Array;
  width: number;
  height: number;
  mediaType: 'image/png' | 'image/webp' | 'image/jpeg';
}

/**
 * Version of this toolkit's pixel-producing code (normalize, render, SVG sanitize/render). Bump it
 * whenever a change alters output bytes, so cached outputs of the old code stop matching.
 */
export const MEDIA_CODE_VERSION = 1;

/** Default quality per lossy format. */
export const DEFAULT_QUALITY: Readonly<Record<'webp' | 'jpeg', number>> = Object.freeze({ webp: 80, jpeg: 82 });

/** Profiles used when kiln.yaml names none. */
export const DEFAULT_PROFILES: readonly Readonly<RenderProfile>[] = Object.freeze([
  Object.freeze({ name: 'thumb', maxSidePx: 128, format: ProfileFormat.png }),
  Object.freeze({ name: 'preview', maxSidePx: 512, format: ProfileFormat.webp, quality: DEFAULT_QUALITY.webp }),
  Object.freeze({ name: 'large', maxSidePx: 2048, format: ProfileFormat.webp, quality: DEFAULT_QUALITY.webp }),
]);

/** Largest `maxSidePx` a profile may ask for. */
export const PROFILE_MAX_SIDE_PX = 8192;
/** Most profiles one configuration may list. */
export const MAX_PROFILES = 16;
/** sharp's pixel limit for decoding the intermediate: what a max-size normalize can produce (sharp's own default). */
export const RENDER_INPUT_MAX_PIXELS = 0x3fff * 0x3fff;

const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const PROFILE_FIELDS = ['maxSidePx', 'format', 'quality'];
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** What the toolchain digest is computed from. */
export interface ToolchainVersions {
  /** sharp's own version and those of libvips and every codec it bundles (`sharp.versions`). */
  sharp: Readonly<Record<string, string | undefined>>;
  resvg: string;
  /** Version of the bundled `dejavu-fonts-ttf` package (fonts change SVG output). */
  fonts: string;
  /** {@link MEDIA_CODE_VERSION}. */
  code: number;
}

/** The versions of this process's toolchain. */
export const TOOLCHAIN_VERSIONS: Readonly<ToolchainVersions> = Object.freeze(currentToolchain());

function currentToolchain(): ToolchainVersions {
  const require = createRequire(import.meta.url);
  const versionOf = (pkg: string): string => (require(`${pkg}/package.json`) as { version: string }).version;
  return { sharp: { ...sharp.versions }, resvg: versionOf('@resvg/resvg-js'), fonts: versionOf('dejavu-fonts-ttf'), code: MEDIA_CODE_VERSION };
}

/** sha256 (hex) of the canonical JSON of `versions`: equal toolchains, equal digests. */
export function toolchainDigest(versions: ToolchainVersions): string {
  return sha256Hex(canonicalJson(versions));
}

/**
 * Digest of {@link TOOLCHAIN_VERSIONS}, for cache keys: it changes when sharp, libvips or a codec,
 * resvg, the bundled fonts or {@link MEDIA_CODE_VERSION} change.
 */
export const TOOLCHAIN_DIGEST: string = toolchainDigest(TOOLCHAIN_VERSIONS);

/**
 * Renders one profile from a normalized PNG (the output of `normalizeImage`). Throws a permanent
 * `ASSET_UNREADABLE` when the input is not a decodable PNG.
 */
export async function renderProfile(normalizedPng: Uint8Array, profile: RenderProfile, limits: { maxPixels?: number } = {}): Promise<RenderedProfile> {
  checkProfile(profile);
  if (!PNG_SIGNATURE.every((b, i) => normalizedPng[i] === b)) {
    throw assetFailure('ASSET_UNREADABLE', 'the normalized intermediate is not a PNG', { reason: 'intermediate' });
  }
  const side = profile.maxSidePx;
  const resized = sharp(normalizedPng, { limitInputPixels: limits.maxPixels ?? RENDER_INPUT_MAX_PIXELS, failOn: 'warning' }).resize({
    width: side,
    height: side,
    fit: 'inside',
    withoutEnlargement: true,
    kernel: 'lanczos3',
  });
  try {
    const { data, info } = await encode(resized, profile).toBuffer({ resolveWithObject: true });
    return { bytes: data, width: info.width, height: info.height, mediaType: `image/${profile.format}` };
  } catch (err) {
    throw assetFailure('ASSET_UNREADABLE', `cannot render profile ${profile.name}: ${(err as Error).message}`, { reason: 'render' }, err);
  }
}

/** The fixed encoder settings of each format. */
function encode(image: Sharp, profile: RenderProfile): Sharp {
  switch (profile.format) {
    case ProfileFormat.png:
      return image.png({ compressionLevel: 9, adaptiveFiltering: true, palette: false, progressive: false });
    case ProfileFormat.webp:
      return image.webp({ quality: profile.quality ?? DEFAULT_QUALITY.webp, alphaQuality: 100, effort: 4, smartSubsample: false, lossless: false, nearLossless: false });
    case ProfileFormat.jpeg:
      // JPEG has no alpha: transparent areas become white, as a viewer would show them on a page.
      return image
        .flatten({ background: '#ffffff' })
        .jpeg({ quality: profile.quality ?? DEFAULT_QUALITY.jpeg, progressive: false, chromaSubsampling: '4:2:0', mozjpeg: false, optimiseCoding: true });
  }
}

/** A profile that did not come through {@link parseProfiles} is still checked before use. */
function checkProfile(profile: RenderProfile): void {
  const { name, ...fields } = profile;
  const problems = profileProblems(name, fields);
  if (problems.length > 0) throw new ValidationError(`invalid profile ${profile.name}: ${problems.map((p) => p.message).join('; ')}`, { details: { problems } });
}

/** One problem found by {@link parseProfiles}. */
export interface ProfileProblem {
  /** Dotted path inside the profiles section, e.g. `preview.quality`. */
  path: string;
  message: string;
}

/**
 * Validates the `profiles` section of the thumbnails settings: a mapping from profile name to
 * `{ maxSidePx, format, quality? }`, e.g. `{ thumb: { maxSidePx: 128, format: png } }`. Returns the
 * profiles in the order given, with lossy qualities filled in (so equal configurations hash
 * equally); throws a ValidationError listing every problem (`details.problems`).
 */
export function parseProfiles(raw: unknown): RenderProfile[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ValidationError('profiles must be a mapping of profile name to { maxSidePx, format, quality? }');
  }
  const entries = Object.entries(raw as Record<string, unknown>);
  const problems: ProfileProblem[] = [];
  if (entries.length === 0) problems.push({ path: '', message: 'at least one profile is required' });
  if (entries.length > MAX_PROFILES) problems.push({ path: '', message: `at most ${MAX_PROFILES} profiles are allowed` });
  const profiles: RenderProfile[] = [];
  for (const [name, value] of entries) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push({ path: name, message: 'must be a mapping { maxSidePx, format, quality? }' });
      continue;
    }
    const fields = value as Record<string, unknown>;
    const found = profileProblems(name, fields);
    problems.push(...found);
    if (found.length === 0) profiles.push(withDefaults(name, fields));
  }
  if (problems.length > 0) {
    const list = problems.map((p) => `${p.path === '' ? 'profiles' : `profiles.${p.path}`}: ${p.message}`).join('; ');
    throw new ValidationError(`invalid profiles (${problems.length} problem${problems.length === 1 ? '' : 's'}): ${list}`, { details: { problems } });
  }
  return profiles;
}

function withDefaults(name: string, fields: Record<string, unknown>): RenderProfile {
  const format = fields['format'] as ProfileFormat;
  const quality = format === ProfileFormat.png ? undefined : ((fields['quality'] as number | undefined) ?? DEFAULT_QUALITY[format]);
  return { name, maxSidePx: fields['maxSidePx'] as number, format, ...(quality === undefined ? {} : { quality }) };
}

function profileProblems(name: string, fields: Record<string, unknown>): ProfileProblem[] {
  const problems: ProfileProblem[] = [];
  const add = (field: string, message: string): void => void problems.push({ path: field === '' ? name : `${name}.${field}`, message });
  if (!PROFILE_NAME.test(name)) add('', 'name must be 1-32 lower-case letters, digits, "-" or "_", starting with a letter or digit');
  for (const key of Object.keys(fields)) if (!PROFILE_FIELDS.includes(key)) add(key, `unknown field (known: ${PROFILE_FIELDS.join(', ')})`);
  const side = fields['maxSidePx'];
  if (typeof side !== 'number' || !Number.isSafeInteger(side) || side < 1 || side > PROFILE_MAX_SIDE_PX) add('maxSidePx', `must be an integer from 1 to ${PROFILE_MAX_SIDE_PX}`);
  const format = fields['format'];
  if (typeof format !== 'string' || !Object.hasOwn(ProfileFormat, format)) add('format', `must be one of ${Object.values(ProfileFormat).join(', ')}`);
  const quality = fields['quality'];
  if (quality !== undefined) {
    if (format === ProfileFormat.png) add('quality', 'png is lossless and takes no quality');
    else if (typeof quality !== 'number' || !Number.isSafeInteger(quality) || quality < 1 || quality > 100) add('quality', 'must be an integer from 1 to 100');
  }
  return problems;
}
