/**
 * TIFF keeps its dimensions in the first IFD (image file directory), which may lie anywhere in
 * the file: libtiff, and so sharp/libvips, write it after the pixel data. When it lies beyond the
 * inspected head, this reads just that directory and presents image-size with a compact TIFF
 * (header + directory) holding the same tags, so dimensions still come from the header without
 * reading, let alone decoding, the pixels.
 */

/** Largest first IFD read from past the head (a directory has 2 + 12 x entries bytes; 64 KiB is ~5400 entries). */
export const TIFF_IFD_READ_BYTES = 64 * 1024;

/** `II*\0` (little-endian) or `MM\0*` (big-endian), classic (42) or BigTIFF (43). */
export function isTiff(head: Uint8Array): boolean {
  const [a, b, c, d] = head;
  return (a === 0x49 && b === 0x49 && (c === 42 || c === 43) && d === 0) || (a === 0x4d && b === 0x4d && c === 0 && (d === 42 || d === 43));
}

/** How the caller can read bytes past the head, and how many there are. */
export interface TiffReadOptions {
  totalBytes: number;
  readAt?(offsetBytes: number, lengthBytes: number): Promise<Uint8Array>;
}

/**
 * `head` itself when it is not a TIFF or its first IFD lies inside it (or cannot be located:
 * image-size then reports the damage), else a compact TIFF made of the header and the IFD read
 * with `readAt`. file-type needs the IFD too (to tell TIFF from TIFF-based raw formats).
 */
export async function tiffHeadWithIfd(head: Uint8Array, options: TiffReadOptions): Promise<Uint8Array> {
  if (head.byteLength < 16 || !isTiff(head)) return head;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const littleEndian = head[0] === 0x49;
  const bigTiff = view.getUint16(2, littleEndian) === 43;
  const headerBytes = bigTiff ? 16 : 8;
  const offset = bigTiff ? Number(view.getBigUint64(8, littleEndian)) : view.getUint32(4, littleEndian);
  const countBytes = bigTiff ? 8 : 2;
  const entryBytes = bigTiff ? 20 : 12;
  if (offset + countBytes <= head.byteLength || !options.readAt || offset >= options.totalBytes) return head;
  const ifd = await options.readAt(offset, Math.min(TIFF_IFD_READ_BYTES, options.totalBytes - offset));
  if (ifd.byteLength < countBytes) return head;
  const ifdView = new DataView(ifd.buffer, ifd.byteOffset, ifd.byteLength);
  const entries = bigTiff ? Number(ifdView.getBigUint64(0, littleEndian)) : ifdView.getUint16(0, littleEndian);
  // Only the directory's own entries: what follows it is pixel data, not tags.
  const directory = ifd.subarray(0, Math.min(ifd.byteLength, countBytes + entries * entryBytes));
  // Followed by a zero "next IFD" offset, as in a real file (image-size stops at a zero tag).
  const compact = new Uint8Array(headerBytes + directory.byteLength + (bigTiff ? 8 : 4));
  compact.set(head.subarray(0, headerBytes));
  const compactView = new DataView(compact.buffer);
  if (bigTiff) compactView.setBigUint64(8, BigInt(headerBytes), littleEndian);
  else compactView.setUint32(4, headerBytes, littleEndian);
  compact.set(directory, headerBytes);
  return compact;
}
