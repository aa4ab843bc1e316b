/**
 * Image dimensions from a header, via image-size, safe for views. image-size reads through a
 * DataView over the whole underlying ArrayBuffer, so for a view into a larger buffer (a pooled
 * Buffer, a subarray) a truncated header would be "completed" with whatever bytes follow it in
 * memory. The bytes are copied into a buffer of their own first when they are such a view.
 */
import { imageSize } from 'image-size';

/** What image-size reports: width, height, its type name, EXIF orientation for JPEG. */
export type HeaderSize = ReturnType<typeof imageSize>;

/** Dimensions from the header of `bytes`; throws (image-size's TypeError/RangeError) when they cannot be read. */
export function readHeaderSize(bytes: Uint8Array): HeaderSize {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength) return imageSize(bytes);
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return imageSize(copy);
}
