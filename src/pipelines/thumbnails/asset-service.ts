/**
 * What the asset routes and `kiln assets` do, without HTTP: store an upload and start a run of a
 * new version, describe an asset (versions, publications, run status), read a published profile,
 * delete publications.
 */
import { Readable } from 'node:stream';
import { NotFoundError, PipelineError, tenantKey, ValidationError, type Kiln, type Publication, type Run } from '../../index.ts';
import { ASSET_ID, type AssetSource, type ThumbnailsInput } from './input.ts';
import { THUMBNAILS_PIPELINE } from './pipeline.ts';
import { thumbnailsSettings } from './settings.ts';

/** Counter scope of upload versions. */
const VERSION_SCOPE = 'thumbnails.asset-version';
/** Versions listed by `describe` when no `limit` is given, newest first (at most {@link MAX_LISTED_VERSIONS}). */
export const LISTED_VERSIONS = 50;
/** The largest page of versions `describe` lists. */
export const MAX_LISTED_VERSIONS = 500;

/** A started version. */
export interface StartedVersion {
  assetId: string;
  version: number;
  run: Run;
}

/** An asset as `GET /v1/assets/:id` shows it. */
export interface AssetView {
  asset_id: string;
  /** One page, newest first: `limit` versions (default 50) older than the `before` cursor, if any. */
  versions: { version: number; run_id: string; status: string; error: unknown }[];
  /** Cursor of the next (older) page, `?before=<next_before>`; null when this page holds the oldest version. */
  next_before: string | null;
  publications: Record<string, { version: number; artifact: string; url: string; updated_at: string }>;
}

/** The asset service over one engine. */
/** Published bytes as HTTP sends them: streamed from a store that can (S3), else read whole. */
export interface PublishedBytes {
  size: number;
  /** At least the first {@link SNIFF_BYTES} bytes (all of them when fewer): what the media type is sniffed from. */
  head: Uint8Array;
  /** Every byte, `head` included. */
  body: Readable;
}

/** Bytes enough to tell PNG, JPEG and WebP apart. */
export const SNIFF_BYTES = 12;

/** Opens an artifact for sending; the stream releases the store's body when it ends or is destroyed. */
async function openPublished(kiln: Kiln, ref: string): Promise<PublishedBytes> {
  if (!kiln.artifacts.read) {
    const bytes = await kiln.artifacts.get(ref);
    return { size: bytes.byteLength, head: bytes, body: Readable.from([bytes]) };
  }
  const opened = await kiln.artifacts.read(ref);
  const chunks = opened.body[Symbol.asyncIterator]();
  const first: Uint8Array[] = [];
  let size = 0;
  while (size < SNIFF_BYTES) {
    const next = await chunks.next();
    if (next.done) break;
    first.push(next.value);
    size += next.value.byteLength;
  }
  const head = Buffer.concat(first);
  async function* all(): AsyncIterable<Uint8Array> {
    try {
      yield head;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    } finally {
      await chunks.return?.();
    }
  }
  return { size: opened.size, head, body: Readable.from(all(), { objectMode: false }) };
}

export interface AssetService {
  /** The upload size limit from the pipeline's settings. */
  readonly maxUploadBytes: number;
  /**
   * Stores `bytes` (refused over the limit) and starts a new version, joining the trace of
   * `traceparent` (a W3C header value) when given.
   */
  upload(assetId: string, bytes: AsyncIterable<Uint8Array> | Uint8Array, declaredType: string | undefined, profiles?: string[], traceparent?: string): Promise<StartedVersion>;
  /** Starts a new version from `import:<relative path>` (resolved under the configured import roots by the worker). */
  importFrom(assetId: string, source: string, profiles?: string[], traceparent?: string): Promise<StartedVersion>;
  /** The asset with one page of its versions (newest first; `before` is a run id, the cursor). */
  describe(assetId: string, page?: { limit?: number; before?: string }): Promise<AssetView>;
  /** The published bytes of a profile; `NotFoundError` when nothing is published. */
  read(assetId: string, profile: string): Promise<{ publication: Publication; bytes: Uint8Array }>;
  /**
   * The publication of a profile, and how to open its bytes for HTTP (not fetched until `open`, so
   * a 304 costs no read; streamed from a store that can); `NotFoundError` when nothing is published.
   */
  published(assetId: string, profile: string): Promise<{ publication: Publication; open(): Promise<PublishedBytes> }>;
  /** Removes the asset's publications; returns how many. */
  remove(assetId: string): Promise<number>;
}

/** Statuses of runs that may still publish. */
const UNFINISHED = ['queued', 'running', 'parked'] as const;

/** A run that ended meanwhile needs no cancelling. */
function ignoreEnded(err: unknown): void {
  if (!(err instanceof PipelineError && err.code === 'INVALID_TRANSITION')) throw err;
}

/** Throws `ValidationError` unless `assetId` is a valid asset id. */
export function checkAssetId(assetId: string): void {
  if (!ASSET_ID.test(assetId)) throw new ValidationError(`asset id must match ${ASSET_ID}`, { details: { assetId } });
}

/**
 * The store subject of asset `assetId` of `tenant`: `<tenant>/<assetId>` (asset ids contain no
 * `/`), the plain id without a tenant. Tenant A's `logo` and tenant B's `logo` are two subjects:
 * two version counters, two sets of runs superseding each other, two sets of publications.
 */
export function assetSubject(tenant: string | null, assetId: string): string {
  return tenantKey(tenant, assetId);
}

/**
 * Creates the service, acting for `tenant` (null: assets without a tenant, as `kiln assets` and
 * an open server keep them): its runs carry the tenant and its asset ids are the tenant's own.
 */
export function createAssetService(kiln: Kiln, tenant: string | null = null): AssetService {
  const settings = thumbnailsSettings(kiln.settingsOf(THUMBNAILS_PIPELINE));
  const subjectOf = (assetId: string): string => assetSubject(tenant, assetId);
  /** Listing filters of this tenant's runs of an asset. */
  const runsOf = (assetId: string) => ({ pipeline: THUMBNAILS_PIPELINE, subjectId: subjectOf(assetId), ...(tenant === null ? {} : { tenant }) });

  const publicationOf = async (assetId: string, profile: string): Promise<Publication> => {
    checkAssetId(assetId);
    const publication = await kiln.getPublication(subjectOf(assetId), profile);
    if (!publication) throw new NotFoundError('publication', `${assetId}/${profile}`);
    return publication;
  };

  const start = async (assetId: string, source: AssetSource, profiles: string[] | undefined, traceparent: string | undefined): Promise<StartedVersion> => {
    checkAssetId(assetId);
    const subjectId = subjectOf(assetId);
    const version = await kiln.allocateVersion(VERSION_SCOPE, subjectId);
    const input: ThumbnailsInput = { assetId, version, source, ...(profiles ? { profiles } : {}) };
    const { run } = await kiln.submit(THUMBNAILS_PIPELINE, input, {
      subjectId,
      subjectVersion: version,
      ...(tenant === null ? {} : { tenant }),
      ...(traceparent === undefined ? {} : { traceparent }),
    });
    return { assetId, version, run };
  };

  return {
    maxUploadBytes: settings.maxUploadBytes,
    async upload(assetId, bytes, declaredType, profiles, traceparent) {
      checkAssetId(assetId);
      const ref = await kiln.artifacts.put(bytes, { maxBytes: settings.maxUploadBytes, ...(declaredType ? { mediaType: declaredType } : {}) });
      return start(assetId, { upload: ref.ref, ...(declaredType ? { declaredType } : {}) }, profiles, traceparent);
    },
    importFrom: (assetId, source, profiles, traceparent) => start(assetId, { import: source.startsWith('import:') ? source : `import:${source}` }, profiles, traceparent),
    async describe(assetId, page = {}) {
      checkAssetId(assetId);
      const limit = Math.min(page.limit ?? LISTED_VERSIONS, MAX_LISTED_VERSIONS);
      // One more than the page: whether an older page exists, without a count.
      const [listed, publications] = await Promise.all([
        kiln.listRuns({ ...runsOf(assetId), limit: limit + 1, ...(page.before === undefined ? {} : { before: page.before }) }),
        kiln.listPublications(subjectOf(assetId)),
      ]);
      if (listed.length === 0 && publications.length === 0 && page.before === undefined) throw new NotFoundError('asset', assetId);
      const runs = listed.slice(0, limit);
      return {
        asset_id: assetId,
        versions: runs.map((r) => ({ version: r.subjectVersion ?? 0, run_id: r.id, status: r.status, error: r.error })),
        next_before: listed.length > limit ? (runs.at(-1)?.id ?? null) : null,
        publications: Object.fromEntries(
          publications.map((p) => [
            p.profile,
            { version: p.subjectVersion, artifact: p.artifactRef, url: `/v1/assets/${assetId}/${p.profile}`, updated_at: new Date(p.updatedAt).toISOString() },
          ]),
        ),
      };
    },
    async read(assetId, profile) {
      const publication = await publicationOf(assetId, profile);
      return { publication, bytes: await kiln.artifacts.get(publication.artifactRef) };
    },
    async published(assetId, profile) {
      const publication = await publicationOf(assetId, profile);
      return { publication, open: () => openPublished(kiln, publication.artifactRef) };
    },
    async remove(assetId) {
      checkAssetId(assetId);
      const listUnfinished = (status: (typeof UNFINISHED)[number]) =>
        kiln.listRuns({ ...runsOf(assetId), status, limit: LISTED_VERSIONS });
      // Runs still in flight are cancelled first, so none of them can publish after the delete
      // (a cancelled run's jobs are gone: its publish commit is refused).
      for (const status of UNFINISHED) {
        // Cancelled runs leave the listing, so each page is a fresh one until none is left.
        for (let page = await listUnfinished(status); page.length > 0; page = await listUnfinished(status)) {
          for (const run of page) await kiln.cancelRun(run.id, 'asset deleted').catch(ignoreEnded);
          if (page.length < LISTED_VERSIONS) break;
        }
      }
      return kiln.deletePublications(subjectOf(assetId));
    },
  };
}
