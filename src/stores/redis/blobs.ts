/**
 * The `blobs` sub-port of the Redis store: small content-addressed objects, one hash per blob
 * plus a sorted index (lib-blobs.lua), every method one script. Bytes travel as Buffers both ways
 * (binary-safe). A blob is as durable as the server's persistence settings make any write.
 */
import { parseRef } from '../../core/content-ref.ts';
import type { BlobsPort, NewBlob, StoredBlob } from '../../core/ports/blobs.ts';
import type { RedisContext } from './context.ts';
import { listOf } from './rows.ts';

async function putBlob(ctx: RedisContext, blob: NewBlob): Promise<void> {
  parseRef(blob.ref);
  const bytes = Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength);
  await ctx.call<boolean>('blobs-put', [blob.ref, blob.mediaType, bytes, bytes.byteLength]);
}

async function getBlob(ctx: RedisContext, ref: string): Promise<StoredBlob | null> {
  parseRef(ref);
  const reply = await ctx.callBufferReply<[Buffer, Buffer] | null>('blobs-get', [ref]);
  return reply === null ? null : { bytes: reply[0], mediaType: reply[1].toString('utf8') };
}

async function listBlobs(ctx: RedisContext): Promise<{ ref: string; size: number; modifiedAt: number }[]> {
  const flat = listOf(await ctx.call<string[] | Record<string, never>>('blobs-list'));
  const entries = [];
  for (let i = 0; i + 2 < flat.length; i += 3) entries.push({ ref: String(flat[i]), size: Number(flat[i + 1]), modifiedAt: Number(flat[i + 2]) });
  return entries;
}

/** Small content-addressed objects on Redis. */
export function createBlobsPort(ctx: RedisContext): BlobsPort {
  return ctx.port<BlobsPort>({
    put: (blob) => putBlob(ctx, blob),
    get: (ref) => getBlob(ctx, ref),
    has: async (ref) => {
      parseRef(ref);
      return ctx.call<boolean>('blobs-has', [ref]);
    },
    list: () => listBlobs(ctx),
    remove: async (ref, options) => {
      parseRef(ref);
      return ctx.call<boolean>('blobs-remove', [ref, options?.notModifiedAfter ?? '']);
    },
  });
}
