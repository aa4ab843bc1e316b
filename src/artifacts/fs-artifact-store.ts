/**
 * Content-addressed artifact store on a local (or shared) filesystem.
 *
 * Layout under `root`:
 * - `tmp/<random>.tmp` — writes in progress; a crash leaves one here, `collectOrphanedTemps` removes it.
 * - `objects/sha256/ab/cd/<hex>` — the immutable bytes, named by their sha256.
 * - `objects/sha256/ab/cd/<hex>.json` — sidecar `{ size, mediaType }`: the recorded size is what
 *   `get`/`has` check without rehashing; `mediaType` is the one given by the first writer.
 *
 * Every file is written to `tmp/`, fsynced and renamed into place, and the directory fsynced, so a
 * reader never sees a half-written object. The sidecar is placed before the object: an object
 * without its sidecar therefore means damage, not a crash.
 *
 * Byte limit (`maxBytes`, `artifacts.maxBytes` in kiln.yaml): past it a write fails as a full disk
 * does (see byte-limit.ts for what counts and how processes sharing the directory see it).
 *
 * Media type: like an OCI descriptor, the {@link ArtifactRef} returned by `put` carries the caller's
 * `mediaType`; the bytes are shared by every ref with the same content.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { systemClock, type Clock } from '../core/clock.ts';
import { createByteLimit, type ByteLimit } from './byte-limit.ts';
import { ArtifactsUnavailableError, NotFoundError, PipelineError } from '../core/errors.ts';
import type { ArtifactRef, ArtifactStore, StoredArtifact, StoredTemp } from '../core/ports/artifact-store.ts';
import { corrupt, DEFAULT_MEDIA_TYPE, parseRef, tooLarge } from './artifact-refs.ts';

export { DEFAULT_MEDIA_TYPE } from './artifact-refs.ts';

/** Options of {@link createFsArtifactStore}. */
export interface FsArtifactStoreOptions {
  /** Directory holding `tmp/` and `objects/`; created on first write. */
  root: string;
  /** Decides which temp files are old enough to collect, and how often the byte limit walks again. @default systemClock */
  clock?: Clock;
  /**
   * Most bytes of stored objects; a write past it fails like a full disk (`ENOSPC`, so
   * `ARTIFACTS_UNAVAILABLE`, retryable). @default no limit
   */
  maxBytes?: number;
}

/** An {@link ArtifactStore} with filesystem extras. */
export interface FsArtifactStore extends ArtifactStore {
  /** Absolute path of the object file of `ref` (it may not exist). Throws `ValidationError` on a bad ref. */
  pathOf(ref: string): string;
  /** Size and first-recorded media type of a stored object, or null when absent. */
  stat(ref: string): Promise<ArtifactRef | null>;
}

const TEMP_SUFFIX = '.tmp';

interface Sidecar {
  size: number;
  mediaType: string;
}

/** Where things live under the root. */
interface Layout {
  tmpDir: string;
  objectPath(hex: string): string;
  newTempPath(): string;
  /** `mkdir -p`, once per directory per store (directories are never removed by the store). */
  ensureDir(dir: string): Promise<void>;
  /** Forgets which directories exist (after one vanished). */
  forgetDirs(): void;
  /** The byte limit, when one is set. */
  limit: ByteLimit | undefined;
}

/** Creates a filesystem artifact store rooted at `options.root`. */
export function createFsArtifactStore(options: FsArtifactStoreOptions): FsArtifactStore {
  const root = resolve(options.root);
  const clock = options.clock ?? systemClock;
  const tmpDir = join(root, 'tmp');
  const madeDirs = new Set<string>();
  const objectsDir = join(root, 'objects', 'sha256');
  const layout: Layout = {
    tmpDir,
    objectPath: (hex) => join(root, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex),
    newTempPath: () => join(tmpDir, `${randomBytes(16).toString('hex')}${TEMP_SUFFIX}`),
    ensureDir: async (dir) => {
      if (madeDirs.has(dir)) return;
      await mkdir(dir, { recursive: true });
      madeDirs.add(dir);
    },
    forgetDirs: () => madeDirs.clear(),
    limit: options.maxBytes === undefined ? undefined : createByteLimit(options.maxBytes, () => sumObjectBytes(objectsDir), () => clock.now()),
  };
  const statRef = async (ref: string): Promise<ArtifactRef | null> => {
    const hex = parseRef(ref);
    const [sidecar, file] = await Promise.all([readSidecar(layout, hex), statOrNull(layout.objectPath(hex))]);
    if (!sidecar || file?.size !== sidecar.size) return null;
    return { ref, size: sidecar.size, mediaType: sidecar.mediaType };
  };
  // Filesystem errors stop here (the store's edge): a full, read-only or failing disk leaves as
  // ArtifactsUnavailableError (503, retryable), whatever the operation.
  return {
    put: atEdge((data, putOptions) => putArtifact(layout, data, putOptions)),
    get: atEdge((ref, getOptions) => getArtifact(layout, ref, getOptions)),
    has: atEdge(async (ref) => (await statRef(ref)) !== null),
    stat: atEdge(statRef),
    collectOrphanedTemps: atEdge((olderThanMs) => collectTemps(tmpDir, clock.now() - olderThanMs)),
    listTemps: () => iterateAtEdge(listTemps(tmpDir)),
    list: () => iterateAtEdge(listObjects(objectsDir)),
    remove: atEdge((ref, removeOptions) => removeObject(layout, ref, removeOptions?.notModifiedAfter)),
    pathOf: (ref) => layout.objectPath(parseRef(ref)),
    checkWritable: atEdge(() => probeWrite(layout)),
  };
}

/** errno codes that mean the disk cannot serve now (full, read-only, not permitted, failing). */
const UNAVAILABLE_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO', 'EMFILE', 'ENFILE']);

/** The one mapping of filesystem errors: an unavailable disk becomes `ArtifactsUnavailableError`. */
export function mapFsError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof PipelineError || typeof code !== 'string' || !UNAVAILABLE_ERRNOS.has(code)) return err;
  return new ArtifactsUnavailableError(`the artifact store cannot write now (${code}): ${(err as Error).message}`, {
    cause: err,
    details: { errno: code, retryAfterMs: UNAVAILABLE_RETRY_AFTER_MS },
  });
}

/** Retry-After suggested with `ARTIFACTS_UNAVAILABLE`: space may be freed, a disk remounted. */
const UNAVAILABLE_RETRY_AFTER_MS = 5_000;

function atEdge<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await fn(...args);
    } catch (err) {
      throw mapFsError(err);
    }
  };
}

async function* iterateAtEdge<T>(items: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* items;
  } catch (err) {
    throw mapFsError(err);
  }
}

/** Size of the health probe: a block, so a disk with no room for a real write fails it. */
const PROBE_BYTES = 4096;

/** Writes, syncs and removes a probe temp file. */
async function probeWrite(layout: Layout): Promise<void> {
  // Past the byte limit no real write fits either: the probe fails the same way.
  await layout.limit?.reserve(PROBE_BYTES);
  layout.limit?.settle(PROBE_BYTES, false);
  await layout.ensureDir(layout.tmpDir);
  const tmp = layout.newTempPath();
  try {
    await writeTemp(tmp, [Buffer.alloc(PROBE_BYTES)], Number.POSITIVE_INFINITY);
  } finally {
    await rm(tmp, { force: true });
  }
}

async function putArtifact(
  layout: Layout,
  data: Uint8Array | AsyncIterable<Uint8Array>,
  options: { mediaType?: string; maxBytes?: number } = {},
): Promise<ArtifactRef> {
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const mediaType = options.mediaType ?? DEFAULT_MEDIA_TYPE;
  if (data instanceof Uint8Array) {
    // Refuse an oversized buffer before touching the disk.
    if (data.byteLength > maxBytes) throw tooLarge(maxBytes);
    return putBuffer(layout, data, mediaType);
  }
  await layout.ensureDir(layout.tmpDir);
  const tmp = layout.newTempPath();
  // Stream bytes are reserved as they come (the size is known only at the end).
  const { limit } = layout;
  let reserved = 0;
  let placed = false;
  const reserve = limit && (async (bytes: number) => {
    await limit.reserve(bytes);
    reserved += bytes;
  });
  try {
    const { hex, size } = await writeTemp(tmp, data, maxBytes, reserve);
    placed = await publish(layout, tmp, hex, { size, mediaType });
    return { ref: `sha256:${hex}`, size, mediaType };
  } finally {
    limit?.settle(reserved, placed);
    // After a successful rename the temp is gone and this is a no-op; otherwise it drops the partial file.
    await rm(tmp, { force: true });
  }
}

/**
 * A buffer's name is known before anything is written: an intact copy costs two reads, and a new
 * object writes its bytes and its sidecar side by side, then renames sidecar and object and fsyncs
 * their directory once (about half the file operations of writing them one after the other).
 */
async function putBuffer(layout: Layout, data: Uint8Array, mediaType: string): Promise<ArtifactRef> {
  const hex = createHash('sha256').update(data).digest('hex');
  const sidecar: Sidecar = { size: data.byteLength, mediaType };
  const ref = { ref: `sha256:${hex}`, size: data.byteLength, mediaType };
  const target = layout.objectPath(hex);
  if ((await statOrNull(target))?.size === sidecar.size && (await readSidecar(layout, hex))?.size === sidecar.size) {
    // A re-put counts as a fresh write for garbage collection (its grace period starts again).
    const now = new Date();
    await utimes(target, now, now).catch(() => undefined);
    return ref;
  }
  await layout.limit?.reserve(data.byteLength);
  let placed = false;
  try {
    try {
      await writeBuffer(layout, data, sidecar, target);
    } catch (err) {
      if (!isCode(err, 'ENOENT')) throw err;
      // A directory was removed behind the store's back (it remembers the ones it made): once more.
      layout.forgetDirs();
      await writeBuffer(layout, data, sidecar, target);
    }
    placed = true;
  } finally {
    layout.limit?.settle(data.byteLength, placed);
  }
  return ref;
}

async function writeBuffer(layout: Layout, data: Uint8Array, sidecar: Sidecar, target: string): Promise<void> {
  await Promise.all([layout.ensureDir(layout.tmpDir), layout.ensureDir(dirname(target))]);
  const objectTemp = layout.newTempPath();
  const sidecarTemp = layout.newTempPath();
  const pending = new Set([objectTemp, sidecarTemp]);
  try {
    await Promise.all([
      writeTemp(objectTemp, [data], Number.POSITIVE_INFINITY),
      writeTemp(sidecarTemp, [Buffer.from(JSON.stringify(sidecar))], Number.POSITIVE_INFINITY),
    ]);
    // The sidecar goes first, so an object is never visible without its size record (if a crash
    // keeps only the object's rename, `has` reports it missing and the next put rewrites both).
    await rename(sidecarTemp, `${target}.json`);
    pending.delete(sidecarTemp);
    await rename(objectTemp, target);
    pending.delete(objectTemp);
    await fsyncDirectory(dirname(target));
  } finally {
    await Promise.all([...pending].map((path) => rm(path, { force: true })));
  }
}

/** Moves a complete temp file to its object path, unless an intact copy is already there; true when it moved it. */
async function publish(layout: Layout, tmp: string, hex: string, sidecar: Sidecar): Promise<boolean> {
  const target = layout.objectPath(hex);
  const dir = dirname(target);
  await layout.ensureDir(dir);
  const recorded = await readSidecar(layout, hex);
  // The sidecar goes first, so an object is never visible without its size record.
  if (recorded?.size !== sidecar.size) await writeFileAtomically(layout, `${target}.json`, JSON.stringify(sidecar));
  const existing = await statOrNull(target);
  // Same hash and same size, with its record intact: the object is already there (a racing or earlier put).
  if (existing?.size === sidecar.size && recorded?.size === sidecar.size) return false;
  // Absent, or present but damaged: rename atomically replaces it.
  await rename(tmp, target);
  await fsyncDirectory(dir);
  return true;
}

async function writeFileAtomically(layout: Layout, path: string, text: string): Promise<void> {
  const tmp = layout.newTempPath();
  try {
    await writeTemp(tmp, [Buffer.from(text)], Number.POSITIVE_INFINITY);
    await rename(tmp, path);
    await fsyncDirectory(dirname(path));
  } finally {
    await rm(tmp, { force: true });
  }
}

async function readSidecar(layout: Layout, hex: string): Promise<Sidecar | null> {
  try {
    const parsed: unknown = JSON.parse(await readFile(`${layout.objectPath(hex)}.json`, 'utf8'));
    return isSidecar(parsed) ? parsed : null;
  } catch (err) {
    if (isCode(err, 'ENOENT') || err instanceof SyntaxError) return null;
    throw err;
  }
}

async function getArtifact(layout: Layout, ref: string, options: { verify?: boolean } = {}): Promise<Uint8Array> {
  const hex = parseRef(ref);
  let bytes: Buffer;
  try {
    bytes = await readFile(layout.objectPath(hex));
  } catch (err) {
    if (isCode(err, 'ENOENT')) throw new NotFoundError('artifact', ref);
    throw err;
  }
  const sidecar = await readSidecar(layout, hex);
  if (!sidecar) throw corrupt(ref, 'its size record (sidecar) is missing or unreadable');
  if (bytes.byteLength !== sidecar.size) throw corrupt(ref, `size is ${bytes.byteLength} bytes, recorded ${sidecar.size}`);
  if (options.verify) {
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== hex) throw corrupt(ref, `content hashes to sha256:${actual}`);
  }
  return bytes;
}

/** Walks `objects/sha256/ab/cd/<hex>` (sidecars and stray names skipped). */
async function* listObjects(objectsDir: string): AsyncIterable<StoredArtifact> {
  for (const first of await readdirOrEmpty(objectsDir)) {
    for (const second of await readdirOrEmpty(join(objectsDir, first))) {
      const dir = join(objectsDir, first, second);
      for (const name of await readdirOrEmpty(dir)) {
        if (!/^[0-9a-f]{64}$/.test(name)) continue;
        const info = await statOrNull(join(dir, name));
        if (info) yield { ref: `sha256:${name}`, size: info.size, modifiedAt: info.mtimeMs };
      }
    }
  }
}

/** Bytes of every stored object (the byte limit's walk). */
async function sumObjectBytes(objectsDir: string): Promise<number> {
  let total = 0;
  for await (const object of listObjects(objectsDir)) total += object.size;
  return total;
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (isCode(err, 'ENOENT') || isCode(err, 'ENOTDIR')) return [];
    throw err;
  }
}

/** Unlinks the object first (it is what readers look for), then its sidecar. */
async function removeObject(layout: Layout, ref: string, notModifiedAfter = Number.POSITIVE_INFINITY): Promise<boolean> {
  const target = layout.objectPath(parseRef(ref));
  const info = await statOrNull(target);
  if (info && info.mtimeMs > notModifiedAfter) return false;
  await rm(target, { force: true });
  await rm(`${target}.json`, { force: true });
  if (info) layout.limit?.removed(info.size);
  return info !== null;
}

/** The temp files under `tmp/`: file name, size and last write (a file gone meanwhile is skipped). */
async function* tempFiles(tmpDir: string): AsyncIterable<{ name: string; size: number; mtimeMs: number }> {
  for (const name of await readdirOrEmpty(tmpDir)) {
    if (!name.endsWith(TEMP_SUFFIX)) continue;
    const info = await statOrNull(join(tmpDir, name));
    if (info) yield { name, size: info.size, mtimeMs: info.mtimeMs };
  }
}

/** The temp files as `ArtifactStore.listTemps` reports them. */
async function* listTemps(tmpDir: string): AsyncIterable<StoredTemp> {
  for await (const temp of tempFiles(tmpDir)) yield { path: `tmp/${temp.name}`, size: temp.size, modifiedAt: temp.mtimeMs };
}

/** Removes temp files last modified before `cutoffMs` (epoch ms); returns how many. */
async function collectTemps(tmpDir: string, cutoffMs: number): Promise<number> {
  let removed = 0;
  for await (const temp of tempFiles(tmpDir)) {
    // A put still writing keeps touching its file's mtime, so only stalled (crashed) writes qualify.
    if (temp.mtimeMs >= cutoffMs) continue;
    await rm(join(tmpDir, temp.name), { force: true });
    removed += 1;
  }
  return removed;
}

/**
 * Streams chunks into a new file while hashing and counting; fsyncs it before returning.
 * `reserve`, when given, is asked for each chunk's bytes before they are written.
 */
async function writeTemp(
  path: string,
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  maxBytes: number,
  reserve?: (bytes: number) => Promise<void>,
): Promise<{ hex: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  // 'wx': a name clash would mean two writers share one temp; fail instead.
  const file = await open(path, 'wx');
  try {
    for await (const chunk of chunks) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge(maxBytes);
      await reserve?.(chunk.byteLength);
      hash.update(chunk);
      let offset = 0;
      while (offset < chunk.byteLength) offset += (await file.write(chunk, offset)).bytesWritten;
    }
    // Durable before the rename makes it visible: a crash must not publish a truncated object.
    await file.sync();
  } finally {
    await file.close();
  }
  return { hex: hash.digest('hex'), size };
}

/** Persists a rename: without it a crash can lose the directory entry of a "published" file. */
async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (err) {
    // Some filesystems (and platforms) cannot fsync a directory; the rename is still atomic there.
    if (!isCode(err, 'EINVAL') && !isCode(err, 'EISDIR') && !isCode(err, 'EPERM')) throw err;
  } finally {
    await handle.close();
  }
}

async function statOrNull(path: string): Promise<{ size: number; mtimeMs: number } | null> {
  try {
    return await stat(path);
  } catch (err) {
    if (isCode(err, 'ENOENT')) return null;
    throw err;
  }
}

function isSidecar(value: unknown): value is Sidecar {
  const v = value as Partial<Sidecar> | null;
  return typeof v === 'object' && v !== null && Number.isSafeInteger(v.size) && typeof v.mediaType === 'string';
}

function isCode(err: unknown, code: string): boolean {
  return (err as { code?: unknown } | null)?.code === code;
}
