/** The artifact store port: content-addressed immutable blobs. */

/** A stored immutable blob, addressed by content. */
export interface ArtifactRef {
  /** `sha256:<hex>`. */
  ref: string;
  size: number;
  mediaType: string;
}

/** Content-addressed immutable artifact storage. */
export interface ArtifactStore {
  /**
   * Stores content under its sha256 (the filesystem store: a temp file written while hashing,
   * fsynced, then renamed; S3: one atomic PUT with the checksum). Writing the same content twice,
   * even concurrently, yields one object, and refreshes its modification time. A half-written
   * object is never visible.
   */
  put(data: Uint8Array | AsyncIterable<Uint8Array>, options?: { mediaType?: string; maxBytes?: number }): Promise<ArtifactRef>;
  /** Reads an artifact; verifies its size (and its checksum when `verify`). `NotFoundError` if absent. */
  get(ref: string, options?: { verify?: boolean }): Promise<Uint8Array>;
  /** True when the object exists with the right size. */
  has(ref: string): Promise<boolean>;
  /** Removes temp files older than `olderThanMs`; returns how many. */
  collectOrphanedTemps(olderThanMs: number): Promise<number>;
  /** Every temp file (writes in progress, or left by a crashed write), in no particular order; removes nothing. */
  listTemps(): AsyncIterable<StoredTemp>;
  /** Every stored object, in no particular order, with when it was last written (epoch ms). */
  list(): AsyncIterable<StoredArtifact>;
  /**
   * Removes an object and its records; false if it was not there, or (with `notModifiedAfter`)
   * if it was written again after that time (a re-put made it live again). For garbage collection only.
   */
  remove(ref: string, options?: { notModifiedAfter?: number }): Promise<boolean>;
  /**
   * Opens an artifact for streaming (HTTP serves it without holding it whole): its size, the media
   * type of its first writer and its bytes, unverified. `NotFoundError` if absent. Optional: a store
   * without it is read with `get`.
   */
  read?(ref: string): Promise<ArtifactRead>;
  /**
   * Proves a write can succeed now (a small probe file written, synced and removed), or throws
   * `ArtifactsUnavailableError`; for health checks. Optional: a store without it is not probed.
   */
  checkWritable?(): Promise<void>;
}

/** An artifact opened by `ArtifactStore.read`. */
export interface ArtifactRead {
  size: number;
  mediaType: string;
  /** The bytes (a Node stream on Node); the reader consumes them, or ends the iteration early to release them. */
  body: AsyncIterable<Uint8Array>;
}

/** An object as `ArtifactStore.list` reports it. */
export interface StoredArtifact {
  ref: string;
  size: number;
  /** Last write (a re-put of the same content refreshes it), epoch ms. */
  modifiedAt: number;
}

/** A temp file as `ArtifactStore.listTemps` reports it. */
export interface StoredTemp {
  /** Where it is, relative to the artifact store (e.g. `tmp/<random>.tmp`). */
  path: string;
  size: number;
  /** Last write, epoch ms: a write in progress keeps moving it. */
  modifiedAt: number;
}
