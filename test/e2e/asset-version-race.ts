/**
 * The racing-versions check, one body for the in-process HTTP suite and the multi-process
 * end-to-end test: v1, v2 and v3 of each asset are uploaded at once with random delays (each
 * version a different color, so its pixels say which version they are), while a reader polls
 * `GET /v1/assets/:id/:profile` for every profile. At the end only v3's outputs are published,
 * every older run either finished before v3 existed or was superseded, and the reader never saw an
 * older version after a newer one, nor a version label on another version's pixels.
 */
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { DEFAULT_PROFILES } from '../../src/pipelines/thumbnails/media/render-profile.ts';
import { decodePixels, isNear, type Rgb } from '../support/asset-fixtures.ts';

/** Each asset races its three versions with delays up to this long: from "all at once" to "one after the other". */
export const DELAY_SPREADS_MS: readonly number[] = [5, 60, 500, 2_000];
const COLORS: readonly Rgb[] = [
  [220, 30, 30],
  [30, 180, 40],
  [40, 60, 220],
];

/** One read of a published profile. */
export interface RaceRead {
  status: number;
  version: number;
  etag: string;
  bytes: Uint8Array;
}

/** How the race reaches the service (in-process inject or real servers). */
export interface RaceDriver {
  /** `PUT /v1/assets/:id` with a PNG body; `attempt` spreads uploads over servers. */
  upload(assetId: string, png: Buffer, attempt: number): Promise<{ version: number; runId: string }>;
  read(assetId: string, profile: string): Promise<RaceRead>;
  /** Waits until the run settled; its status and, when it rendered, the artifact of each profile. */
  settle(runId: string): Promise<{ status: string; error: unknown; renders: Record<string, string> }>;
}

/** A 1200x800 solid image: big enough that resizing takes a moment, so versions overlap. */
function versionImage(color: Rgb): Promise<Buffer> {
  const [r, g, b] = color;
  return sharp({ create: { width: 1200, height: 800, channels: 3, background: { r, g, b } } }).png({ compressionLevel: 1 }).toBuffer();
}

interface Observation {
  version: number;
  etag: string;
}

/** Polls every profile of every asset until `stop()`; keeps each answer's version and ETag, and the bytes of each ETag. */
function startReader(driver: RaceDriver, assetIds: readonly string[]): { stop(): Promise<void>; seen: Map<string, Observation[]>; bytes: Map<string, Uint8Array> } {
  const seen = new Map<string, Observation[]>();
  const bytes = new Map<string, Uint8Array>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const assetId of assetIds) {
        for (const { name } of DEFAULT_PROFILES) {
          const read = await driver.read(assetId, name);
          if (read.status === 404) continue;
          assert.equal(read.status, 200, `${assetId}/${name}`);
          const key = `${assetId}/${name}`;
          seen.set(key, [...(seen.get(key) ?? []), { version: read.version, etag: read.etag }]);
          if (!bytes.has(read.etag)) bytes.set(read.etag, read.bytes);
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  // Surfaced by stop(); without this a failed read would be an unhandled rejection meanwhile.
  loop.catch(() => undefined);
  return {
    seen,
    bytes,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

type Versions = Map<string, Map<number, { runId: string; color: Rgb }>>;

async function uploadAll(driver: RaceDriver, assetIds: readonly string[]): Promise<Versions> {
  const images = await Promise.all(COLORS.map(versionImage));
  const versions: Versions = new Map();
  await Promise.all(
    assetIds.flatMap((assetId, a) =>
      images.map(async (image, i) => {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * (DELAY_SPREADS_MS[a] ?? 0)));
        const { version, runId } = await driver.upload(assetId, image, a * images.length + i);
        const byVersion = versions.get(assetId) ?? new Map<number, { runId: string; color: Rgb }>();
        versions.set(assetId, byVersion.set(version, { runId, color: COLORS[i] as Rgb }));
      }),
    ),
  );
  return versions;
}

/** Every read of one profile: versions never go back, and each version label comes with that version's pixels. */
async function checkReads(key: string, observed: readonly Observation[], bytes: Map<string, Uint8Array>, colors: Map<number, { color: Rgb }>): Promise<void> {
  for (let i = 1; i < observed.length; i++) {
    assert.ok((observed[i]?.version ?? 0) >= (observed[i - 1]?.version ?? 0), `${key}: read v${observed[i]?.version} after v${observed[i - 1]?.version}`);
  }
  for (const { version, etag } of new Map(observed.map((o) => [o.etag, o])).values()) {
    const pixels = await decodePixels(bytes.get(etag) ?? new Uint8Array());
    assert.ok(isNear(pixels.at(10, 10), colors.get(version)?.color ?? [0, 0, 0]), `${key}: v${version} served another version's pixels`);
  }
}

/** Runs the race on `assetIds` (one per {@link DELAY_SPREADS_MS} entry) and asserts the outcome; returns a summary. */
export async function raceVersions(driver: RaceDriver, prefix: string): Promise<string> {
  const assetIds = DELAY_SPREADS_MS.map((spread) => `${prefix}-${spread}ms`);
  const reader = startReader(driver, assetIds);
  const versions = await uploadAll(driver, assetIds);
  const statuses: Record<string, number> = {};
  const newestRenders = new Map<string, Record<string, string>>();
  for (const [assetId, byVersion] of versions) {
    assert.deepEqual([...byVersion.keys()].sort(), [1, 2, 3], `${assetId}: versions 1, 2, 3 handed out once each`);
    for (const [version, { runId }] of byVersion) {
      const run = await driver.settle(runId);
      statuses[run.status] = (statuses[run.status] ?? 0) + 1;
      if (version === 3) {
        assert.equal(run.status, 'succeeded', `${assetId} v3: ${JSON.stringify(run.error)}`);
        newestRenders.set(assetId, run.renders);
      } else assert.ok(['succeeded', 'superseded'].includes(run.status), `${assetId} v${version}: ${run.status}`);
    }
  }
  await reader.stop();
  for (const assetId of assetIds) {
    const byVersion = versions.get(assetId) ?? new Map<number, { runId: string; color: Rgb }>();
    for (const { name } of DEFAULT_PROFILES) {
      const final = await driver.read(assetId, name);
      assert.equal(final.version, 3, `${assetId}/${name} ends at v3`);
      assert.equal(`sha256:${final.etag.replaceAll('"', '')}`, newestRenders.get(assetId)?.[name], `${assetId}/${name} is v3's render`);
      assert.ok(isNear((await decodePixels(final.bytes)).at(10, 10), byVersion.get(3)?.color ?? [0, 0, 0]), `${assetId}/${name} shows v3's color`);
      await checkReads(`${assetId}/${name}`, reader.seen.get(`${assetId}/${name}`) ?? [], reader.bytes, byVersion);
    }
  }
  const reads = [...reader.seen.values()].reduce((n, o) => n + o.length, 0);
  const sequences = assetIds.map((id) => `${id}: ${[...new Set((reader.seen.get(`${id}/thumb`) ?? []).map((o) => o.version))].join('>')}`);
  return `runs ${JSON.stringify(statuses)}; ${reads} reads; versions seen ${sequences.join(', ')}`;
}
