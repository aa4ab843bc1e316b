/**
 * Content-addressed artifact store on an S3-compatible object store (AWS S3, MinIO, s3rver, ...).
 *
 * Keys under `s3://bucket/prefix/`, named as the filesystem store names its files:
 * - `objects/sha256/ab/cd/<hex>` — the immutable bytes, named by their sha256; the object's
 *   Content-Type is the media type given by the writer that created it.
 * - `tmp/<random>.tmp` — only the health probe's object (written and deleted at once; one left by a
 *   crash is what `listTemps` and `collectOrphanedTemps` find).
 *
 * Writes. The bytes are hashed first (a stream is gathered in memory while it is hashed, within
 * `maxBytes`), then sent in ONE PutObject under the name of that hash, with the SHA-256 as
 * `x-amz-checksum-sha256`: S3 refuses the PUT when the bytes it received hash otherwise, so
 * nothing is ever published under a hash it does not have. An S3 PUT is atomic: an object is
 * visible whole or not at all, so there is no temp-then-rename and no reader ever sees a
 * half-written object, even when the writer dies mid-upload. A new object is written with
 * `If-None-Match: *`; `412 PreconditionFailed` means another writer of the same content got there
 * first, which is success. Servers that ignore the header (s3rver) just store the identical bytes
 * again: two writers of one hash never corrupt each other either way. Re-putting content already
 * stored leaves a fresh object alone (written less than {@link REFRESH_AFTER_MS} ago: garbage
 * collection's grace period, an hour by default, counts from its LastModified, so it is safe for
 * far longer than any commit takes) and sends an older one again, which refreshes LastModified (a
 * copy onto itself would be cheaper on AWS, but not every S3-compatible server moves LastModified
 * on a copy). Skipping fresh rewrites also matters on servers whose rewrite is not atomic (s3rver
 * truncates the file, then writes it): a reader racing a second writer of the same upload would
 * otherwise see it empty.
 *
 * Reads. `get` checks the received length against Content-Length (an intact object cannot be
 * shorter: PUTs are atomic) and, with `verify`, the sha256; `read` streams the body for HTTP.
 *
 * Garbage collection. `list` pages through ListObjectsV2 (LastModified is the last write);
 * `remove` with `notModifiedAfter` HEADs the object and leaves it when it was written since, as the
 * filesystem store does with its mtime.
 *
 * Failures. Every S3 failure (unreachable, timeout, 5xx, throttling, denied, missing bucket) leaves
 * as `ArtifactsUnavailableError` (HTTP 503 + Retry-After, retryable); a missing key is
 * `NotFoundError`, as on the filesystem.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  type _Object,
} from '@aws-sdk/client-s3';
import { systemClock, type Clock } from '../core/clock.ts';
import { NotFoundError } from '../core/errors.ts';
import type { ArtifactRead, ArtifactRef, ArtifactStore, StoredArtifact, StoredTemp } from '../core/ports/artifact-store.ts';
import { corrupt, DEFAULT_MEDIA_TYPE, parseRef, tooLarge } from './artifact-refs.ts';
import { createS3Client, isS3NotFound, mapS3Error, parseS3Url, s3Status, type S3ArtifactsSettings } from './s3-client.ts';

/** Options of {@link createS3ArtifactStore}. */
export interface S3ArtifactStoreOptions extends S3ArtifactsSettings {
  /** A client to use instead of one built from the settings (the store does not destroy it). */
  client?: S3Client;
  /** The AWS environment the client falls back to. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** Decides which probe leftovers are old enough to collect. @default systemClock */
  clock?: Clock;
}

/** An {@link ArtifactStore} with S3 extras. */
export interface S3ArtifactStore extends ArtifactStore {
  readonly bucket: string;
  /** Object key of `ref` (it may not exist). Throws `ValidationError` on a bad ref. */
  keyOf(ref: string): string;
  /** Size and media type of a stored object, or null when absent. */
  stat(ref: string): Promise<ArtifactRef | null>;
  /** Read stream for HTTP (`ArtifactStore.read`). */
  read(ref: string): Promise<ArtifactRead>;
  checkWritable(): Promise<void>;
  /** Releases the client's sockets (only a client the store built). */
  close(): void;
}

const TEMP_PREFIX = 'tmp/';
const TEMP_SUFFIX = '.tmp';
const OBJECTS_PREFIX = 'objects/sha256/';
/** A stored object younger than this is not rewritten by a put of the same bytes (see the module comment). */
export const REFRESH_AFTER_MS = 10 * 60_000;
/** Size of the health probe, as on the filesystem. */
const PROBE_BYTES = 4096;

/** Creates an S3 artifact store at `options.url` (`s3://bucket[/prefix]`). */
export function createS3ArtifactStore(options: S3ArtifactStoreOptions): S3ArtifactStore {
  const { bucket, prefix } = parseS3Url(options.url);
  const client = options.client ?? createS3Client(options, options.env);
  const clock = options.clock ?? systemClock;
  const keyOf = (ref: string): string => {
    const hex = parseRef(ref);
    return `${prefix}${OBJECTS_PREFIX}${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex}`;
  };
  const edge = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) => atEdge(bucket, fn);

  /** HEAD of `key`, or null when absent. */
  const head = async (key: string) => {
    try {
      return await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    } catch (err) {
      if (isS3NotFound(err)) return null;
      throw err;
    }
  };

  const putBytes = async (bytes: Uint8Array, mediaType: string): Promise<ArtifactRef> => {
    const digest = createHash('sha256').update(bytes).digest();
    const ref = `sha256:${digest.toString('hex')}`;
    const key = keyOf(ref);
    const existing = await head(key);
    const writtenAt = existing?.LastModified?.getTime();
    if (writtenAt !== undefined && clock.now() - writtenAt < REFRESH_AFTER_MS) return { ref, size: bytes.byteLength, mediaType: existing?.ContentType ?? mediaType };
    const put = (ifNoneMatch: boolean) =>
      client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          // The first writer's media type stays (an object is never changed, only refreshed).
          ContentType: existing?.ContentType ?? mediaType,
          ChecksumSHA256: digest.toString('base64'),
          ...(ifNoneMatch ? { IfNoneMatch: '*' } : {}),
        }),
      );
    try {
      // Absent: create it, unless someone else does first. Present and old: rewrite the identical
      // bytes, which refreshes LastModified (a re-put makes an object young again for GC).
      await put(existing === null);
    } catch (err) {
      // Another writer of the same content created it between our HEAD and our PUT: it is there.
      if (s3Status(err) !== 412) throw err;
    }
    return { ref, size: bytes.byteLength, mediaType };
  };

  const statRef = async (ref: string): Promise<ArtifactRef | null> => {
    const found = await head(keyOf(ref));
    if (!found) return null;
    return { ref, size: found.ContentLength ?? 0, mediaType: found.ContentType ?? DEFAULT_MEDIA_TYPE };
  };

  /** GET of an object's body as a stream, with its length and type; `NotFoundError` when absent. */
  const open = async (ref: string): Promise<ArtifactRead> => {
    const key = keyOf(ref);
    try {
      const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return { size: answer.ContentLength ?? 0, mediaType: answer.ContentType ?? DEFAULT_MEDIA_TYPE, body: answer.Body as AsyncIterable<Uint8Array> };
    } catch (err) {
      if (isS3NotFound(err)) throw new NotFoundError('artifact', ref);
      throw err;
    }
  };

  const get = async (ref: string, getOptions: { verify?: boolean } = {}): Promise<Uint8Array> => {
    const { size, body } = await open(ref);
    const bytes = await readAll(body);
    if (bytes.byteLength !== size) throw corrupt(ref, `${bytes.byteLength} bytes received, Content-Length ${size}`);
    if (getOptions.verify) {
      const actual = createHash('sha256').update(bytes).digest('hex');
      if (`sha256:${actual}` !== ref) throw corrupt(ref, `content hashes to sha256:${actual}`);
    }
    return bytes;
  };

  const listKeys = (under: string) => listAll(client, bucket, `${prefix}${under}`);

  return {
    bucket,
    keyOf,
    put: edge(async (data, putOptions = {}) => {
      const maxBytes = putOptions.maxBytes ?? Number.POSITIVE_INFINITY;
      const bytes = data instanceof Uint8Array ? data : await gather(data, maxBytes);
      if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
      return putBytes(bytes, putOptions.mediaType ?? DEFAULT_MEDIA_TYPE);
    }),
    get: edge(get),
    read: edge(open),
    has: edge(async (ref) => (await statRef(ref)) !== null),
    stat: edge(statRef),
    collectOrphanedTemps: edge(async (olderThanMs) => {
      const cutoff = clock.now() - olderThanMs;
      let removed = 0;
      for await (const object of listKeys(TEMP_PREFIX)) {
        if (!object.Key?.endsWith(TEMP_SUFFIX) || (object.LastModified?.getTime() ?? 0) >= cutoff) continue;
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key }));
        removed += 1;
      }
      return removed;
    }),
    listTemps: () =>
      iterateAtEdge(bucket, mapObjects(listKeys(TEMP_PREFIX), (o, key): StoredTemp | null =>
        key.endsWith(TEMP_SUFFIX) ? { path: key.slice(prefix.length), size: o.Size ?? 0, modifiedAt: o.LastModified?.getTime() ?? 0 } : null,
      )),
    list: () =>
      iterateAtEdge(bucket, mapObjects(listKeys(OBJECTS_PREFIX), (o, key): StoredArtifact | null => {
        const hex = /\/([0-9a-f]{64})$/.exec(key)?.[1];
        // Stray keys (not named like an object, or in the wrong folder) are not artifacts.
        return hex && keyOf(`sha256:${hex}`) === key ? { ref: `sha256:${hex}`, size: o.Size ?? 0, modifiedAt: o.LastModified?.getTime() ?? 0 } : null;
      })),
    remove: edge(async (ref, removeOptions = {}) => {
      const key = keyOf(ref);
      const found = await head(key);
      if (!found) return false;
      // Written again since the caller looked (GC's grace): live again, it stays.
      if ((found.LastModified?.getTime() ?? 0) > (removeOptions.notModifiedAfter ?? Number.POSITIVE_INFINITY)) return false;
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      return true;
    }),
    checkWritable: edge(async () => {
      const key = `${prefix}${TEMP_PREFIX}${randomBytes(16).toString('hex')}${TEMP_SUFFIX}`;
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.alloc(PROBE_BYTES), ContentLength: PROBE_BYTES }));
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    }),
    close: () => {
      if (!options.client) client.destroy();
    },
  };
}

function atEdge<A extends unknown[], R>(bucket: string, fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await fn(...args);
    } catch (err) {
      throw mapS3Error(err, bucket);
    }
  };
}

async function* iterateAtEdge<T>(bucket: string, items: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* items;
  } catch (err) {
    throw mapS3Error(err, bucket);
  }
}

/** Every object under `prefix`, page by page. */
async function* listAll(client: S3Client, bucket: string, prefix: string): AsyncIterable<_Object> {
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
    yield* page.Contents ?? [];
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

async function* mapObjects<T>(objects: AsyncIterable<_Object>, fn: (object: _Object, key: string) => T | null): AsyncIterable<T> {
  for await (const object of objects) {
    const mapped = object.Key === undefined ? null : fn(object, object.Key);
    if (mapped !== null) yield mapped;
  }
}

/** A stream's bytes, hashed later; refused past `maxBytes` before more is read. */
async function gather(chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    parts.push(chunk);
  }
  return Buffer.concat(parts, size);
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(parts);
}
