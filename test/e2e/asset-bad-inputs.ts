/**
 * The bad uploads of the asset end-to-end test, each with how it is sent and how it must end:
 * refused at the door with 413 (over the size limit: by Content-Length, while streaming a raw body,
 * and while streaming a multipart part), or accepted and then ended by a permanent failure with a
 * stable code (truncated JPEG, zero bytes, text named `.png`, a 50000x50000 PNG header, a
 * Content-Type that contradicts the bytes, an SVG that outlives its render budget). The hostile SVG is separate: it may be refused or
 * rendered without its dangerous parts, and the test checks whichever happened.
 */
import { randomBytes } from 'node:crypto';
import { blurBombSvg, pngBombHeader, solidImage, textFile, truncatedJpeg, zeroBytes } from '../support/asset-fixtures.ts';
import { multipartBody, putAsset, putChunked, putWithLength, UploadMode, type UploadAnswer } from './asset-http.ts';

/** Caught from the header, before anything is decoded. */
const INSPECT = ['inspect'];
/** A truncated scan may only show when the pixels are decoded (`transform`). */
const INSPECT_OR_DECODE = ['inspect', 'transform'];

/** One bad upload. */
export interface BadUpload {
  assetId: string;
  kind: string;
  send(base: string): Promise<UploadAnswer>;
  /**
   * `413`: refused before anything is stored; otherwise the code the run must end with, and the
   * stages that may raise it (header-level problems are caught by `inspect`, before any decoding).
   */
  expect: { refused: 413 } | { code: string; stages: readonly string[] };
}

/** The bad uploads for a server whose `maxUploadBytes` is `maxUploadBytes`; ids are `<prefix>-<kind>`. */
export async function buildBadUploads(prefix: string, maxUploadBytes: number): Promise<BadUpload[]> {
  const truncated = await truncatedJpeg();
  const jpeg = await solidImage('jpeg', '#445566');
  // Random bytes: nothing else in the store can have their hash, or the hash of a prefix of them.
  const oversized = randomBytes(maxUploadBytes + 200_000);
  const oversizedForm = multipartBody(oversized, 'huge.jpg', 'image/jpeg');
  const bad = (kind: string, send: BadUpload['send'], expect: BadUpload['expect']): BadUpload => ({ assetId: `${prefix}-${kind}`, kind, send, expect });
  return [
    bad('truncated-jpeg', (base) => putAsset(base, `${prefix}-truncated-jpeg`, truncated, { mode: UploadMode.raw, contentType: 'image/jpeg' }), { code: 'ASSET_UNREADABLE', stages: INSPECT_OR_DECODE }),
    bad('zero-bytes', (base) => putAsset(base, `${prefix}-zero-bytes`, zeroBytes(), { mode: UploadMode.raw, contentType: 'application/octet-stream' }), { code: 'ASSET_UNREADABLE', stages: INSPECT }),
    bad(
      'text-named-png',
      (base) => putAsset(base, `${prefix}-text-named-png`, textFile(), { mode: UploadMode.multipart, contentType: 'application/octet-stream', filename: 'photo.png' }),
      { code: 'ASSET_UNSUPPORTED_FORMAT', stages: INSPECT },
    ),
    // What a browser sends for a file named .png: the type from the extension. The bytes are no image at all.
    bad('text-declared-png', (base) => putAsset(base, `${prefix}-text-declared-png`, textFile(), { mode: UploadMode.raw, contentType: 'image/png' }), { code: 'ASSET_UNSUPPORTED_FORMAT', stages: INSPECT }),
    bad('png-bomb', (base) => putAsset(base, `${prefix}-png-bomb`, pngBombHeader(), { mode: UploadMode.multipart, contentType: 'image/png', filename: 'bomb.png' }), { code: 'ASSET_TOO_MANY_PIXELS', stages: INSPECT }),
    bad('jpeg-declared-png', (base) => putAsset(base, `${prefix}-jpeg-declared-png`, jpeg, { mode: UploadMode.raw, contentType: 'image/png' }), { code: 'ASSET_TYPE_MISMATCH', stages: INSPECT }),
    // Renders for minutes: stopped at the render budget, a permanent failure (no replayable dead letter).
    bad('blur-bomb-svg', (base) => putAsset(base, `${prefix}-blur-bomb-svg`, blurBombSvg(), { mode: UploadMode.raw, contentType: 'image/svg+xml' }), { code: 'ASSET_TOO_COMPLEX', stages: ['transform'] }),
    bad('oversize-length', (base) => putWithLength(base, `${prefix}-oversize-length`, oversized, 'image/jpeg'), { refused: 413 }),
    bad('oversize-chunked', (base) => putChunked(base, `${prefix}-oversize-chunked`, oversized, 'image/jpeg'), { refused: 413 }),
    bad('oversize-multipart', (base) => putChunked(base, `${prefix}-oversize-multipart`, oversizedForm.body, oversizedForm.contentType), { refused: 413 }),
  ];
}
