/**
 * The module matrix, from the `qr` package (paulmillr, pinned): the content as UTF-8 in a single
 * byte-mode segment, at the requested error-correction level, smallest version that fits,
 * automatic mask. No ECI header is written: the encoder has none, and readers (zxing among them)
 * take byte-mode data that is valid UTF-8 as UTF-8, which the unit tests check with the real
 * decoder for accents, CJK, emoji and random Unicode. An ECI header would also cost capacity.
 */
import { encodeQR, type ErrorCorrection } from 'qr';
import type { QrEcc } from './capacity.ts';

/** A square QR symbol without quiet zone. */
export interface QrMatrix {
  /** Modules per side. */
  readonly modules: number;
  /** Row-major, `modules * modules` entries: 1 for a dark module, 0 for a light one. */
  readonly dark: Uint8Array;
}

const ENCODER_ECC: Readonly<Record<QrEcc, ErrorCorrection>> = { L: 'low', M: 'medium', Q: 'quartile', H: 'high' };

/** Encodes `content` (byte mode, UTF-8) at `ecc`. Throws the encoder's error if it does not fit. */
export function encodeQrMatrix(content: string, ecc: QrEcc): QrMatrix {
  // border 1 is the smallest the encoder allows; the ring is cut off below (the quiet zone is ours).
  const rows = encodeQR(content, 'raw', { ecc: ENCODER_ECC[ecc], encoding: 'byte', border: 1 });
  const modules = rows.length - 2;
  const dark = new Uint8Array(modules * modules);
  for (let y = 0; y < modules; y++) {
    const row = rows[y + 1] as boolean[];
    for (let x = 0; x < modules; x++) if (row[x + 1]) dark[y * modules + x] = 1;
  }
  return { modules, dark };
}
