/**
 * The `blobs` sub-port of the memory store: small content-addressed objects in a map, each with
 * its first media type and its last write (store clock). Bytes are copied in and out.
 */
import type { StoredArtifact } from '../../core/ports/artifact-store.ts';
import type { BlobsPort, NewBlob, StoredBlob } from '../../core/ports/blobs.ts';
import { parseRef } from '../../core/content-ref.ts';
import type { MemoryContext } from './context.ts';
import type { MemoryState, StoredMemoryBlob } from './state.ts';

/** Stores the blob unless its ref exists; either way its modification time becomes now. */
function putBlob(state: MemoryState, blob: NewBlob): void {
  parseRef(blob.ref);
  const now = state.clock.now();
  const stored = state.blobs.get(blob.ref);
  if (stored) stored.modifiedAt = now;
  else state.blobs.set(blob.ref, { bytes: new Uint8Array(blob.bytes), mediaType: blob.mediaType, modifiedAt: now });
}

function getBlob(state: MemoryState, ref: string): StoredBlob | null {
  parseRef(ref);
  const stored = state.blobs.get(ref);
  return stored ? { bytes: stored.bytes, mediaType: stored.mediaType } : null;
}

function listBlobs(state: MemoryState): StoredArtifact[] {
  return [...state.blobs]
    .map(([ref, blob]) => ({ ref, size: blob.bytes.byteLength, modifiedAt: blob.modifiedAt }))
    .sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}

function removeBlob(state: MemoryState, ref: string, notModifiedAfter = Number.POSITIVE_INFINITY): boolean {
  parseRef(ref);
  const stored: StoredMemoryBlob | undefined = state.blobs.get(ref);
  if (!stored || stored.modifiedAt > notModifiedAfter) return false;
  return state.blobs.delete(ref);
}

/** Small content-addressed objects of the state. */
export function createBlobsPort(ctx: MemoryContext): BlobsPort {
  const { state } = ctx;
  return {
    put: ctx.atomic((blob) => putBlob(state, blob)),
    get: ctx.atomic((ref) => getBlob(state, ref)),
    has: ctx.atomic((ref) => {
      parseRef(ref);
      return state.blobs.has(ref);
    }),
    list: ctx.atomic(() => listBlobs(state)),
    remove: ctx.atomic((ref, options) => removeBlob(state, ref, options?.notModifiedAfter)),
  };
}
