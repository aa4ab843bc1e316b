import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeQR, type ErrorCorrection } from 'qr';
import {
  QR_MAX_CONTENT_BYTES,
  QR_MAX_VERSION,
  qrByteCapacity,
  qrModulesPerSide,
  qrVersionFor,
  type QrEcc,
} from '../../../src/pipelines/qr-code/capacity.ts';
import { encodeQrMatrix } from '../../../src/pipelines/qr-code/matrix.ts';

const LEVELS: [QrEcc, ErrorCorrection][] = [
  ['L', 'low'],
  ['M', 'medium'],
  ['Q', 'quartile'],
  ['H', 'high'],
];

/** Whether the encoder fits `bytes` bytes of byte-mode data into `version` at `ecc`. */
function fits(bytes: number, version: number, ecc: ErrorCorrection): boolean {
  try {
    encodeQR('a'.repeat(bytes), 'raw', { ecc, encoding: 'byte', version, border: 1 });
    return true;
  } catch {
    return false;
  }
}

describe('QR byte-mode capacity', () => {
  test('the longest content per level is the version-40 byte capacity: L 2953, M 2331, Q 1663, H 1273 bytes', () => {
    assert.deepEqual({ ...QR_MAX_CONTENT_BYTES }, { L: 2953, M: 2331, Q: 1663, H: 1273 });
  });

  test('every table entry is exactly what the encoder fits into that version (and one byte more does not fit)', () => {
    for (const [level, encoderLevel] of LEVELS) {
      for (let version = 1; version <= QR_MAX_VERSION; version++) {
        const capacity = qrByteCapacity(version, level);
        assert.ok(fits(capacity, version, encoderLevel), `v${version} ${level} holds ${capacity}`);
        assert.ok(!fits(capacity + 1, version, encoderLevel), `v${version} ${level} does not hold ${capacity + 1}`);
      }
    }
  });

  test('the predicted version is the one the encoder picks, at every version boundary', () => {
    for (const [level] of LEVELS) {
      for (const version of [1, 2, 9, 10, 26, 27, 39, 40]) {
        const capacity = qrByteCapacity(version, level);
        assert.equal(qrVersionFor(capacity, level), version);
        assert.equal(encodeQrMatrix('b'.repeat(capacity), level).modules, qrModulesPerSide(version), `${capacity} bytes at ${level}`);
        if (version < QR_MAX_VERSION) {
          assert.equal(encodeQrMatrix('b'.repeat(capacity + 1), level).modules, qrModulesPerSide(version + 1));
        }
      }
    }
  });

  test('no version holds one byte past the version-40 capacity', () => {
    for (const [level] of LEVELS) assert.equal(qrVersionFor(QR_MAX_CONTENT_BYTES[level] + 1, level), undefined);
    assert.throws(() => encodeQrMatrix('a'.repeat(2954), 'L'));
  });

  test('the encoder never adds an ECI header: non-ASCII content has the same capacity as ASCII', () => {
    // 777 x "€" (3 bytes each) = 2331 bytes: exactly the ecc M limit, so no room for an ECI segment.
    assert.equal(encodeQrMatrix('€'.repeat(777), 'M').modules, qrModulesPerSide(40));
    assert.equal(encodeQrMatrix('é'.repeat(7), 'M').modules, qrModulesPerSide(1));
  });
});
