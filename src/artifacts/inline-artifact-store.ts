/**
 * An artifact store in two tiers: small buffers inline in the store (its `blobs` sub-port), the
 * rest in an underlying artifact store (filesystem or S3). Refs are the same whichever tier holds
 * an object, so nothing that reads, verifies or collects artifacts needs to know.
 *
 * Why: a small object in the file store costs two fsynced files, two renames and a directory
 * fsync; the store's commit already makes the run state durable, and a row in the same database
 * rides on it (artifacts.inlineMaxBytes in kiln.yaml, README "Artifacts").
 *
 * Guarantee: an inline artifact is exactly as durable as the store's commits. SQLite (WAL,
 * synchronous=NORMAL) keeps it across a process crash; a power loss may drop the WAL's tail, but
 * in commit order, so anything committed later that refers to it (a stage output, a publication)
 * is dropped with it: nothing ever points to a missing blob. PostgreSQL: its commit. Redis: its
 * persistence settings. Objects in the underlying tier are fsynced (filesystem) or acknowledged
 * (S3) one by one, as before.
 *
 * `put` of a buffer of at most `maxInlineBytes` goes inline; streams and larger buffers go to the
 * underlying store. Reads look inline first, then in the underlying store; `remove` clears both.
 */
import { createHash } from 'node:crypto';
import type { ArtifactRead, ArtifactRef, ArtifactStore, StoredArtifact } from '../core/ports/artifact-store.ts';
import type { BlobsPort } from '../core/ports/blobs.ts';
import { corrupt, DEFAULT_MEDIA_TYPE, parseRef, tooLarge } from './artifact-refs.ts';

/** What {@link createInlineArtifactStore} needs. */
export interface InlineArtifactStoreOptions {
  /** The store's `blobs` sub-port: the inline tier. */
  blobs: BlobsPort;
  /** Where everything else goes (filesystem or S3). */
  underlying: ArtifactStore;
  /** Largest buffer kept inline, bytes; 0 keeps nothing inline. */
  maxInlineBytes: number;
}

/** Creates the two-tier store (see the module comment); `maxInlineBytes` 0 returns `underlying` itself. */
export function createInlineArtifactStore(options: InlineArtifactStoreOptions): ArtifactStore {
  const { blobs, underlying, maxInlineBytes } = options;
  if (maxInlineBytes <= 0) return underlying;
  const store: ArtifactStore = {
    async put(data, putOptions = {}) {
      if (!(data instanceof Uint8Array) || data.byteLength > maxInlineBytes) return underlying.put(data, putOptions);
      if (putOptions.maxBytes !== undefined && data.byteLength > putOptions.maxBytes) throw tooLarge(putOptions.maxBytes);
      const mediaType = putOptions.mediaType ?? DEFAULT_MEDIA_TYPE;
      const ref: ArtifactRef = { ref: `sha256:${createHash('sha256').update(data).digest('hex')}`, size: data.byteLength, mediaType };
      await blobs.put({ ref: ref.ref, mediaType, bytes: data });
      return ref;
    },
    async get(ref, getOptions = {}) {
      const hex = parseRef(ref);
      const blob = await blobs.get(ref);
      if (!blob) return underlying.get(ref, getOptions);
      if (getOptions.verify) {
        const actual = createHash('sha256').update(blob.bytes).digest('hex');
        if (actual !== hex) throw corrupt(ref, `its inline bytes hash to sha256:${actual}`);
      }
      return blob.bytes;
    },
    async has(ref) {
      return (await blobs.has(ref)) || underlying.has(ref);
    },
    collectOrphanedTemps: (olderThanMs) => underlying.collectOrphanedTemps(olderThanMs),
    listTemps: () => underlying.listTemps(),
    list: () => listBoth(blobs, underlying),
    async remove(ref, removeOptions) {
      // Both tiers: the same content may sit in each (inlineMaxBytes changed between writes).
      const [inline, other] = await Promise.all([blobs.remove(ref, removeOptions), underlying.remove(ref, removeOptions)]);
      return inline || other;
    },
    ...(underlying.checkWritable ? { checkWritable: underlying.checkWritable.bind(underlying) } : {}),
  };
  // `read` only where the underlying store has one: a caller without it reads with `get`, which covers both tiers.
  const { read } = underlying;
  if (read) store.read = async (ref) => (await readInline(blobs, ref)) ?? read.call(underlying, ref);
  return store;
}

/** An inline artifact opened as `ArtifactStore.read` does (its bytes as one chunk), or null when not inline. */
async function readInline(blobs: BlobsPort, ref: string): Promise<ArtifactRead | null> {
  const blob = await blobs.get(ref);
  if (!blob) return null;
  const { bytes } = blob;
  return {
    size: bytes.byteLength,
    mediaType: blob.mediaType,
    body: (async function* () {
      yield bytes;
    })(),
  };
}

/**
 * Every object of both tiers, sorted by ref, each once: one in both tiers is listed with the later
 * of its two times, so a remove with that time as `notModifiedAfter` may clear both copies.
 */
async function* listBoth(blobs: BlobsPort, underlying: ArtifactStore): AsyncIterable<StoredArtifact> {
  const byRef = new Map<string, StoredArtifact>();
  for (const object of await blobs.list()) byRef.set(object.ref, object);
  for await (const object of underlying.list()) {
    const inline = byRef.get(object.ref);
    byRef.set(object.ref, inline ? { ...inline, modifiedAt: Math.max(inline.modifiedAt, object.modifiedAt) } : object);
  }
  yield* [...byRef.values()].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}
