/**
 * An in-process memo of rendered images by content hash, bounded in bytes (least recently used
 * goes first). Safe because a hash names its bytes forever: the renderer identity is part of the
 * hash, so a memoised image can never be stale. It spares the store and the disk on repeated
 * `GET /v1/qr/:hash`.
 */

/** A memoised image. */
export interface MemoImage {
  bytes: Uint8Array;
  mediaType: string;
}

/** The memo. */
export interface ImageMemo {
  get(hash: string): MemoImage | undefined;
  set(hash: string, image: MemoImage): void;
}

/** Creates a memo holding at most `maxBytes` of images (a larger image is not kept). */
export function createImageMemo(maxBytes: number): ImageMemo {
  // Map iteration order is insertion order: re-inserting on use makes the first key the LRU one.
  const images = new Map<string, MemoImage>();
  let total = 0;
  return {
    get(hash) {
      const image = images.get(hash);
      if (image) {
        images.delete(hash);
        images.set(hash, image);
      }
      return image;
    },
    set(hash, image) {
      if (image.bytes.byteLength > maxBytes || images.has(hash)) return;
      images.set(hash, image);
      total += image.bytes.byteLength;
      for (const [oldest, old] of images) {
        if (total <= maxBytes) break;
        images.delete(oldest);
        total -= old.bytes.byteLength;
      }
    },
  };
}
