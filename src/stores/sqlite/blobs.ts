/**
 * The `blobs` sub-port of the SQLite store: small content-addressed objects in the `blobs` table
 * (BLOB column), each method one transaction. A blob is as durable as the store's commits: with
 * the WAL at synchronous=NORMAL a process crash loses nothing committed, and a power loss may
 * drop the WAL's tail, but in commit order, so whatever committed later and refers to the blob
 * is dropped with it.
 */
import { parseRef } from '../../core/content-ref.ts';
import type { BlobsPort, NewBlob, StoredBlob } from '../../core/ports/blobs.ts';
import type { SqliteContext } from './context.ts';

function putBlob(ctx: SqliteContext, blob: NewBlob): void {
  parseRef(blob.ref);
  const bytes = Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength);
  ctx.sql().upsertBlob.run({ ref: blob.ref, media_type: blob.mediaType, size: bytes.byteLength, bytes, now: ctx.clock.now() });
}

function getBlob(ctx: SqliteContext, ref: string): StoredBlob | null {
  parseRef(ref);
  const row = ctx.sql().selectBlob.get(ref);
  return row ? { bytes: row.bytes, mediaType: row.media_type } : null;
}

function removeBlob(ctx: SqliteContext, ref: string, notModifiedAfter = Number.POSITIVE_INFINITY): boolean {
  parseRef(ref);
  // SQLite compares an integer column with +Infinity (a REAL) as expected: every row qualifies.
  return ctx.sql().deleteBlob.run({ ref, not_modified_after: notModifiedAfter }).changes === 1;
}

/** Small content-addressed objects over `ctx`. */
export function createBlobsPort(ctx: SqliteContext): BlobsPort {
  return {
    put: ctx.write((blob) => putBlob(ctx, blob)),
    get: ctx.outside((ref) => getBlob(ctx, ref)),
    has: ctx.outside((ref) => {
      parseRef(ref);
      return ctx.sql().selectBlobExists.get(ref) !== undefined;
    }),
    list: ctx.read(() => ctx.sql().selectBlobEntries.all().map((row) => ({ ref: row.ref, size: row.size, modifiedAt: row.modified_at }))),
    remove: ctx.write((ref, options) => removeBlob(ctx, ref, options?.notModifiedAfter)),
  };
}
