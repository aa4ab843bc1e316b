/**
 * Frame counts of animated GIF and WebP read from the container structure (no pixel decoding),
 * so the pixel limit can count every frame. Walks only the bytes it is given: for a file longer
 * than the head, the count is a lower bound.
 */
import type { AssetFormat } from './asset-format.ts';

/** Frames found in `head`, for GIF and WebP; undefined for other formats or unwalkable data. */
export function countFrames(format: AssetFormat, head: Uint8Array): number | undefined {
  if (format === 'gif') return countGifFrames(head);
  if (format === 'webp') return countWebpFrames(head);
  return undefined;
}

/** Skips GIF data sub-blocks (length-prefixed, ended by a zero length); returns the offset after them. */
function skipSubBlocks(bytes: Uint8Array, offset: number): number {
  let at = offset;
  while (at < bytes.length && bytes[at] !== 0) at += 1 + (bytes[at] ?? 0);
  return at + 1;
}

/** Image descriptors (0x2C) between the header and the trailer (0x3B). */
function countGifFrames(bytes: Uint8Array): number | undefined {
  if (bytes.length < 13) return undefined;
  const packed = bytes[10] ?? 0;
  let at = 13 + (packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0);
  let frames = 0;
  while (at < bytes.length) {
    const block = bytes[at];
    if (block === 0x3b) break;
    if (block === 0x21) {
      at = skipSubBlocks(bytes, at + 2);
    } else if (block === 0x2c) {
      frames += 1;
      const local = bytes[at + 9] ?? 0;
      at += 10 + (local & 0x80 ? 3 * 2 ** ((local & 0x07) + 1) : 0);
      at = skipSubBlocks(bytes, at + 1); // +1: the LZW minimum code size byte
    } else {
      break; // not a block we know: stop counting rather than guess
    }
  }
  return frames;
}

/** `ANMF` chunks of an animated WebP; 1 for a still one. */
function countWebpFrames(bytes: Uint8Array): number | undefined {
  if (bytes.length < 16) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let frames = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = String.fromCharCode(...bytes.subarray(at, at + 4));
    if (id === 'ANMF') frames += 1;
    const size = view.getUint32(at + 4, true);
    at += 8 + size + (size % 2); // chunks are padded to even sizes
  }
  return Math.max(frames, 1);
}
