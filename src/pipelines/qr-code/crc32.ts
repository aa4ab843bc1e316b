/**
 * CRC-32 (ISO 3309 / ITU-T V.42, polynomial 0xEDB88320 reflected), as PNG chunks need. Local
 * because `zlib.crc32` arrived in Node 22 and kiln runs on Node 20.
 */

/** The 256-entry lookup table, built on first use (no work at import time). */
let table: Uint32Array | undefined;

function crcTable(): Uint32Array {
  if (table !== undefined) return table;
  const built = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    built[n] = c >>> 0;
  }
  table = built;
  return built;
}

/** CRC-32 of `bytes[start, end)`, as an unsigned 32-bit integer. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  const lookup = crcTable();
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = (lookup[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
