/**
 * How much a QR symbol holds in byte mode, per version and error-correction level (ISO/IEC
 * 18004 Table 7). kiln always encodes content as UTF-8 in one byte-mode segment without an ECI
 * header (see `render.ts`), so these numbers are exact: `test/unit/qr-code` checks every entry,
 * and the entry plus one byte, against the `qr` encoder.
 */

/** Error-correction levels, from the least redundant (holds the most) to the most. */
export const QrEcc = { L: 'L', M: 'M', Q: 'Q', H: 'H' } as const;
/** One of {@link QrEcc}'s values. */
export type QrEcc = (typeof QrEcc)[keyof typeof QrEcc];

/** The levels in table-column order. */
const ECC_COLUMNS: readonly QrEcc[] = [QrEcc.L, QrEcc.M, QrEcc.Q, QrEcc.H];

/** Byte-mode capacity in bytes: row `v - 1` is version `v`, columns are L, M, Q, H. */
const BYTE_CAPACITY: readonly (readonly [number, number, number, number])[] = [
  [17, 14, 11, 7], [32, 26, 20, 14], [53, 42, 32, 24], [78, 62, 46, 34], [106, 84, 60, 44],
  [134, 106, 74, 58], [154, 122, 86, 64], [192, 152, 108, 84], [230, 180, 130, 98], [271, 213, 151, 119],
  [321, 251, 177, 137], [367, 287, 203, 155], [425, 331, 241, 177], [458, 362, 258, 194], [520, 412, 292, 220],
  [586, 450, 322, 250], [644, 504, 364, 280], [718, 560, 394, 310], [792, 624, 442, 338], [858, 666, 482, 382],
  [929, 711, 509, 403], [1003, 779, 565, 439], [1091, 857, 611, 461], [1171, 911, 661, 511], [1273, 997, 715, 535],
  [1367, 1059, 751, 593], [1465, 1125, 805, 625], [1528, 1190, 868, 658], [1628, 1264, 908, 698], [1732, 1370, 982, 742],
  [1840, 1452, 1030, 790], [1952, 1538, 1112, 842], [2068, 1628, 1168, 898], [2188, 1722, 1228, 958], [2303, 1809, 1283, 983],
  [2431, 1911, 1351, 1051], [2563, 1989, 1423, 1093], [2699, 2099, 1499, 1139], [2809, 2213, 1579, 1219], [2953, 2331, 1663, 1273],
];

/** The largest QR version (177 x 177 modules). */
export const QR_MAX_VERSION = 40;

/** Byte-mode capacity in bytes of version `version` (1..40) at `ecc`. */
export function qrByteCapacity(version: number, ecc: QrEcc): number {
  const row = BYTE_CAPACITY[version - 1];
  if (row === undefined) throw new RangeError(`QR version must be 1..${QR_MAX_VERSION}, got ${version}`);
  return row[ECC_COLUMNS.indexOf(ecc)] as number;
}

/**
 * The longest content, in UTF-8 bytes, each level accepts: the version-40 byte-mode capacity.
 * One more byte is `QR_CONTENT_TOO_LONG`.
 */
export const QR_MAX_CONTENT_BYTES: Readonly<Record<QrEcc, number>> = Object.freeze({
  L: qrByteCapacity(QR_MAX_VERSION, QrEcc.L),
  M: qrByteCapacity(QR_MAX_VERSION, QrEcc.M),
  Q: qrByteCapacity(QR_MAX_VERSION, QrEcc.Q),
  H: qrByteCapacity(QR_MAX_VERSION, QrEcc.H),
});

/**
 * The smallest version whose byte-mode capacity at `ecc` holds `contentBytes` bytes (the one the
 * encoder picks), or `undefined` when even version 40 is too small.
 */
export function qrVersionFor(contentBytes: number, ecc: QrEcc): number | undefined {
  for (let version = 1; version <= QR_MAX_VERSION; version++) {
    if (qrByteCapacity(version, ecc) >= contentBytes) return version;
  }
  return undefined;
}

/** Modules per side of a version's symbol, without quiet zone: 21 for version 1, 177 for 40. */
export function qrModulesPerSide(version: number): number {
  return 17 + 4 * version;
}
