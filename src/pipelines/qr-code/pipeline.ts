/**
 * `qr-code`: `render` -> `publish`. The run input is the request's canonical form; the content
 * hash (canonical form + renderer identity) names everything downstream: the cache entry, the
 * publication subject and the HTTP resource. Rendering is deterministic, so a retry, a duplicate
 * or a second run of the same hash yields the same bytes and the same content-addressed artifact.
 */
import { definePipeline, type JsonValue, type StageContext } from '../../index.ts';
import { canonicalQrRequest, qrContentHash } from './canonical.ts';
import { createImageMemo } from './image-memo.ts';
import { parseQrRequest } from './options.ts';
import { renderQr } from './render.ts';

/** Pipeline name (also the queue prefix). */
export const QR_PIPELINE = 'qr-code';
/** The single-flight cache holding rendered artifacts by content hash. */
export const QR_CACHE = 'qr';
/** Publication profile: one image per content hash. */
export const QR_PROFILE = 'image';

/**
 * Rendered bytes never change for a hash, so the cache entry only expires for housekeeping; and
 * it is only read by a render (a request for a published hash never reaches the cache), so
 * entries expiring together cost nothing.
 */
export const RENDER_TTL_MS = 30 * 24 * 3600_000;
/** A render takes milliseconds; a builder silent for this long has crashed. */
const RENDER_LEASE_MS = 15_000;

/** What `render` and `publish` output. */
export interface QrRenderOutput {
  hash: string;
  artifact: string;
  mediaType: string;
  bytes: number;
}

function parseRenderOutput(value: JsonValue | undefined): QrRenderOutput {
  const v = value as Partial<QrRenderOutput> | null | undefined;
  if (!v || typeof v.hash !== 'string' || typeof v.artifact !== 'string' || typeof v.mediaType !== 'string' || typeof v.bytes !== 'number') {
    throw new Error('render output missing or malformed');
  }
  return { hash: v.hash, artifact: v.artifact, mediaType: v.mediaType, bytes: v.bytes };
}

/**
 * Images this process rendered lately, by artifact ref: the routes of the same process (`kiln
 * serve`) answer from here instead of reading back what was just written. Immutable by ref.
 */
export const recentRenders = createImageMemo(16 * 1024 * 1024);

/** Renders once per hash across all workers (single-flight) and stores the artifact. */
async function render(ctx: StageContext): Promise<JsonValue> {
  const options = parseQrRequest(ctx.input, 'json');
  const hash = qrContentHash(options);
  const store = async (): Promise<{ artifact: string; mediaType: string; bytes: number }> => {
    const image = renderQr(options);
    const ref = await ctx.artifacts.put(image.bytes, { mediaType: image.mediaType });
    recentRenders.set(ref.ref, { bytes: image.bytes, mediaType: image.mediaType });
    return { artifact: ref.ref, mediaType: ref.mediaType, bytes: ref.size };
  };
  // No TTL jitter: the entry's purge time then grows with its build time, so its place in the
  // store's purge index is the newest end, not a random page (one page write fewer per render).
  const { value, result } = await ctx.cache.getOrBuild(
    { cache: QR_CACHE, key: hash, ttlMs: RENDER_TTL_MS, jitterRatio: 0, leaseMs: RENDER_LEASE_MS, signal: ctx.signal },
    store,
  );
  const built = value as { artifact: string; mediaType: string; bytes: number };
  // A cached entry can outlive its object (removed by hand, or by GC): render again, same bytes.
  if (result !== 'miss' && !(await ctx.artifacts.has(built.artifact))) await store();
  const output: QrRenderOutput = { hash, ...built };
  return { ...output };
}

/** Points the hash's publication at the artifact, in the stage's commit (compare-and-set). */
function publish(ctx: StageContext): JsonValue {
  const rendered = parseRenderOutput(ctx.outputs['render']);
  ctx.publish({ subjectId: rendered.hash, profile: QR_PROFILE, artifactRef: rendered.artifact, subjectVersion: 1 });
  return { ...rendered };
}

/** The `qr-code` pipeline definition. */
export const qrCodePipeline = definePipeline({
  name: QR_PIPELINE,
  version: 1,
  // Submissions are canonicalised here too, so a run's input is always the canonical form.
  parseInput: (raw) => canonicalQrRequest(parseQrRequest(raw, 'json')),
  stages: [
    // Renders are short and their artifact writes wait on fsync: more in flight keeps the CPU busy.
    { name: 'render', handler: render, policy: { timeoutMs: 10_000, concurrency: 16 } },
    { name: 'publish', handler: publish, policy: { concurrency: 16 } },
  ],
});
