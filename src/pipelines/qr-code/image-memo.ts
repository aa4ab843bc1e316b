/**
 * An in-process memo of rendered images by content hash, bounded in bytes. Safe because a hash
 * names its bytes forever: the renderer identity is part of the hash, so a memoised image can
 * never be stale. It spares the store and the disk on repeated `GET /v1/qr/:hash`.
 *
 * Eviction is generational rather than strict LRU: images live in a young and an old map; a hit in
 * the old one moves the image to the young one, and when the young map holds half the budget it
 * becomes the old one (the previous old map is dropped). Every operation is O(1): reordering a
 * JavaScript Map on each hit (delete + set) was measured to slow lookups down as the map grows.
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

/** Creates a memo holding at most about `maxBytes` of images (an image larger than half of it is not kept). */
export function createImageMemo(maxBytes: number): ImageMemo {
  const generationBytes = Math.floor(maxBytes / 2);
  let young = new Map<string, MemoImage>();
  let old = new Map<string, MemoImage>();
  let youngBytes = 0;

  const add = (hash: string, image: MemoImage): void => {
    if (youngBytes + image.bytes.byteLength > generationBytes) {
      old = young;
      young = new Map();
      youngBytes = 0;
    }
    young.set(hash, image);
    youngBytes += image.bytes.byteLength;
  };

  return {
    get(hash) {
      const hot = young.get(hash);
      if (hot) return hot;
      const cold = old.get(hash);
      if (cold) {
        old.delete(hash);
        add(hash, cold);
      }
      return cold;
    },
    set(hash, image) {
      if (image.bytes.byteLength > generationBytes || young.has(hash)) return;
      old.delete(hash);
      add(hash, image);
    },
  };
}
