/**
 * The six stages of `thumbnails`. Each reads what the earlier stages output (artifact refs and
 * small facts, never bytes), and every expensive product goes through the engine's single-flight
 * cache keyed by what determines it, so a retry, a duplicate run or another asset with the same
 * bytes reuses it instead of computing it again.
 */
import { createReadStream } from 'node:fs';
import { contentHash, StageFailure, tenantKey, type JsonValue, type StageContext } from '../../index.ts';
import { resolveImport } from './media/import-roots.ts';
import { normalizeImage } from './media/normalize.ts';
import { renderProfile, TOOLCHAIN_DIGEST, type RenderProfile } from './media/render-profile.ts';
import { inspectAsset, type AssetInfo } from './media/sniff.ts';
import { thumbnailsInput } from './input.ts';
import { thumbnailsSettings } from './settings.ts';

/** Cache names (metrics label `cache`). */
export const TRANSFORM_CACHE = 'asset-transform';
export const RENDER_CACHE = 'asset-render';
/** Bumped when the transform step changes its output for the same input. */
const TRANSFORM_PROFILE = 'normalize-v1';
/** Products are immutable for their key; the TTL only bounds how long unused entries are kept. */
const PRODUCT_TTL_MS = 7 * 24 * 3600_000;
const PRODUCT_LEASE_MS = 60_000;

/** Output of `ingest`. */
export interface IngestOutput {
  source: string;
  size: number;
}
/** Output of `transform` and of each rendered profile. */
export interface ImageProduct {
  artifact: string;
  width: number;
  height: number;
  mediaType: string;
}
/** Output of `render`: one product per profile name. */
export interface RenderOutput {
  profiles: Record<string, ImageProduct>;
}

function outputOf<T>(ctx: StageContext, stage: string): T {
  const value = ctx.outputs[stage];
  if (value === undefined || value === null) throw new Error(`stage ${stage} has no output`);
  return value as unknown as T;
}

/** Records the upload, or streams an import into the artifact store (sha256 while writing, size limit). */
export async function ingest(ctx: StageContext): Promise<JsonValue> {
  const { source } = thumbnailsInput(ctx.input);
  const settings = thumbnailsSettings(ctx.settings);
  if ('upload' in source) {
    const bytes = await ctx.artifacts.get(source.upload).catch(() => {
      throw StageFailure.permanent(`uploaded object ${source.upload} is missing`, { code: 'ASSET_UNREADABLE' });
    });
    return { source: source.upload, size: bytes.byteLength };
  }
  const path = await resolveImport(source.import, settings.importRoots);
  const ref = await ctx.artifacts.put(createReadStream(path), { maxBytes: settings.maxUploadBytes });
  return { source: ref.ref, size: ref.size };
}

/** Sniffs the real format and the dimensions from the bytes; refuses what must not be decoded. */
export async function inspect(ctx: StageContext): Promise<JsonValue> {
  const input = thumbnailsInput(ctx.input);
  const settings = thumbnailsSettings(ctx.settings);
  const { source, size } = outputOf<IngestOutput>(ctx, 'ingest');
  const bytes = await ctx.artifacts.get(source);
  const declaredType = 'upload' in input.source ? input.source.declaredType : undefined;
  const info = await inspectAsset(bytes, {
    ...(declaredType === undefined ? {} : { declaredType }),
    maxBytes: settings.maxUploadBytes,
    maxPixels: settings.maxPixels,
    totalBytes: size,
  });
  return { ...info } as unknown as JsonValue;
}

/** Normalises (orientation, sRGB, no metadata; SVG sanitised and rasterised) once per source bytes. */
export async function transform(ctx: StageContext): Promise<JsonValue> {
  const settings = thumbnailsSettings(ctx.settings);
  const { source } = outputOf<IngestOutput>(ctx, 'ingest');
  const info = outputOf<AssetInfo>(ctx, 'inspect');
  const key = contentHash({ source, stage: 'transform', toolchain: TOOLCHAIN_DIGEST, profile: TRANSFORM_PROFILE, maxPixels: settings.maxPixels });
  const { value } = await ctx.cache.getOrBuild({ cache: TRANSFORM_CACHE, key, ttlMs: PRODUCT_TTL_MS, leaseMs: PRODUCT_LEASE_MS, signal: ctx.signal }, async () => {
    const normalized = await normalizeImage(await ctx.artifacts.get(source), info, {
      maxPixels: settings.maxPixels,
      svgRenderBudgetMs: settings.svgRenderBudgetMs,
      signal: ctx.signal,
    });
    const ref = await ctx.artifacts.put(normalized.bytes, { mediaType: normalized.mediaType });
    const product: ImageProduct = { artifact: ref.ref, width: normalized.width, height: normalized.height, mediaType: normalized.mediaType };
    return { ...product };
  });
  return value;
}

function profilesToRender(ctx: StageContext): RenderProfile[] {
  const wanted = thumbnailsInput(ctx.input).profiles;
  const all = thumbnailsSettings(ctx.settings).profiles;
  if (!wanted) return all;
  const unknown = wanted.filter((name) => !all.some((p) => p.name === name));
  if (unknown.length > 0) throw StageFailure.permanent(`unknown profiles ${unknown.join(', ')}`, { code: 'VALIDATION_FAILED' });
  return all.filter((p) => wanted.includes(p.name));
}

/** One output per profile, each cached by (normalized image, profile, toolchain). */
export async function render(ctx: StageContext): Promise<JsonValue> {
  const normalized = outputOf<ImageProduct>(ctx, 'transform');
  const profiles: Record<string, ImageProduct> = {};
  for (const profile of profilesToRender(ctx)) {
    const key = contentHash({ source: normalized.artifact, stage: 'render', toolchain: TOOLCHAIN_DIGEST, profile });
    const { value } = await ctx.cache.getOrBuild({ cache: RENDER_CACHE, key, ttlMs: PRODUCT_TTL_MS, leaseMs: PRODUCT_LEASE_MS, signal: ctx.signal }, async () => {
      const out = await renderProfile(await ctx.artifacts.get(normalized.artifact), profile);
      const ref = await ctx.artifacts.put(out.bytes, { mediaType: out.mediaType });
      const product: ImageProduct = { artifact: ref.ref, width: out.width, height: out.height, mediaType: out.mediaType };
      return { ...product };
    });
    profiles[profile.name] = value as unknown as ImageProduct;
    ctx.progress({ rendered: Object.keys(profiles).length });
  }
  const output: RenderOutput = { profiles };
  return output as unknown as JsonValue;
}

/**
 * Points each `(asset, profile)` at its output in this stage's commit, fenced by the lease and by
 * compare-and-set on the version: an older version never replaces a newer one. The asset is the
 * run's tenant's (see `assetSubject`): whoever submitted the run, it can publish only there.
 */
export function publish(ctx: StageContext): JsonValue {
  const { assetId, version } = thumbnailsInput(ctx.input);
  const { profiles } = outputOf<RenderOutput>(ctx, 'render');
  const subjectId = tenantKey(ctx.run.tenant, assetId);
  for (const [profile, product] of Object.entries(profiles)) {
    ctx.publish({ subjectId, profile, artifactRef: product.artifact, subjectVersion: version });
  }
  return { published: Object.keys(profiles).sort() };
}

/** Temp files this run's crashed attempts may have left; unreferenced artifacts go to the reaper's GC. */
export async function cleanup(ctx: StageContext): Promise<JsonValue> {
  const removed = await ctx.artifacts.collectOrphanedTemps(CLEANUP_TEMP_AGE_MS);
  return { tempsRemoved: removed };
}

/** Temps older than this cannot belong to a write still in progress (stage timeouts are shorter). */
const CLEANUP_TEMP_AGE_MS = 15 * 60_000;
