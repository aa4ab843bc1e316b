/**
 * The `blobs` sub-port: small content-addressed objects kept in the store itself, so they are
 * made durable by the store's own commit instead of a file write and fsync of their own (the
 * inline tier of src/artifacts/inline-artifact-store.ts). Refs and removal semantics are those of
 * the {@link ArtifactStore} (artifact-store.ts): the bytes of a ref never change.
 */
import type { StoredArtifact } from './artifact-store.ts';

/** A blob to store: its ref must be the sha256 of its bytes (the caller computed it). */
export interface NewBlob {
  /** `sha256:<64 lowercase hex>`. */
  ref: string;
  mediaType: string;
  bytes: Uint8Array;
}

/** A stored blob as `get` returns it. */
export interface StoredBlob {
  bytes: Uint8Array;
  /** The media type of the first put. */
  mediaType: string;
}

/** Small content-addressed objects; each method is one atomic unit. A malformed ref is `ValidationError`. */
export interface BlobsPort {
  /**
   * Stores the blob unless its ref exists; an existing one keeps its bytes and media type (same
   * ref, same content) but its modification time is refreshed, as a re-put of an artifact is:
   * garbage collection's grace period starts again.
   */
  put(blob: NewBlob): Promise<void>;
  /** The blob, or null when absent; changes nothing. */
  get(ref: string): Promise<StoredBlob | null>;
  /** True when the blob exists. */
  has(ref: string): Promise<boolean>;
  /** Every blob's ref, size and last write (store clock, epoch ms), sorted by ref. */
  list(): Promise<StoredArtifact[]>;
  /**
   * Removes a blob; false if it was not there, or (with `notModifiedAfter`) if it was written
   * again after that time (a re-put made it live again). For garbage collection only.
   */
  remove(ref: string, options?: { notModifiedAfter?: number }): Promise<boolean>;
}
