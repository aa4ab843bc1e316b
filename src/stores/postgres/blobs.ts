/**
 * The `blobs` sub-port of the PostgreSQL store: small content-addressed objects in the `blobs`
 * table (bytea), made durable by each statement's commit. Every method is one statement
 * (sql/blobs.ts).
 */
import { parseRef } from '../../core/content-ref.ts';
import type { BlobsPort, NewBlob, StoredBlob } from '../../core/ports/blobs.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';

async function putBlob(ctx: PgContext, blob: NewBlob): Promise<void> {
  parseRef(blob.ref);
  const bytes = Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength);
  await queryRows(ctx.pool, ctx.sql.blobs.putBlob, [ctx.now(), blob.ref, blob.mediaType, bytes]);
}

async function getBlob(ctx: PgContext, ref: string): Promise<StoredBlob | null> {
  parseRef(ref);
  const [row] = await queryRows<{ bytes: Buffer; media_type: string }>(ctx.pool, ctx.sql.blobs.getBlob, [ref]);
  return row ? { bytes: row.bytes, mediaType: row.media_type } : null;
}

async function removeBlob(ctx: PgContext, ref: string, notModifiedAfter: number | undefined): Promise<boolean> {
  parseRef(ref);
  const rows = await queryRows(ctx.pool, ctx.sql.blobs.removeBlob, [ref, notModifiedAfter ?? null]);
  return rows.length === 1;
}

/** Small content-addressed objects over the context's pool. */
export function createBlobsPort(ctx: PgContext): BlobsPort {
  return ctx.port<BlobsPort>({
    put: (blob) => putBlob(ctx, blob),
    get: (ref) => getBlob(ctx, ref),
    has: async (ref) => {
      parseRef(ref);
      return (await queryRows<{ found: boolean }>(ctx.pool, ctx.sql.blobs.hasBlob, [ref]))[0]?.found === true;
    },
    list: async () =>
      (await queryRows<{ ref: string; size: number; modified_at: number }>(ctx.pool, ctx.sql.blobs.listBlobs, [])).map((row) => ({
        ref: row.ref,
        size: row.size,
        modifiedAt: row.modified_at,
      })),
    remove: (ref, options) => removeBlob(ctx, ref, options?.notModifiedAfter),
  });
}
