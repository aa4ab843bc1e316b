/**
 * The canonical form of a QR request and its content hash. Two requests that draw the same
 * image (whatever their key order, spelling of colors and enums, or defaults left out) have one
 * canonical form, so one hash, one cache entry and one render. The hash also covers the renderer
 * identity, so upgrading the encoder or changing kiln's PNG/SVG writers changes every hash and
 * never serves bytes made by the old renderer.
 */
import { canonicalJson, sha256Hex } from '../../index.ts';
import type { QrOptions } from './options.ts';

/**
 * The `qr` package version the renderer is built on. It is pinned exactly in package.json, and a
 * unit test checks this constant against the installed package (kept a constant so importing
 * this module reads no files).
 */
export const QR_ENCODER_VERSION = '0.7.0';

/** What produced the bytes. Part of every content hash. */
export interface QrRendererIdentity {
  /** npm package of the module-matrix encoder. */
  readonly encoder: 'qr';
  readonly encoderVersion: string;
  /**
   * kiln's own rendering profile. Bump it whenever the output bytes of the PNG or SVG writer change
   * for the same options (a golden-hash unit test fails until you do).
   */
  readonly profile: number;
}

/** The renderer identity of this build. */
export const RENDERER_IDENTITY: QrRendererIdentity = Object.freeze({ encoder: 'qr', encoderVersion: QR_ENCODER_VERSION, profile: 1 });

/**
 * The canonical form of validated options: every field present except the unused one of
 * `size`/`scale`, keys in sorted order. Options from `parseQrRequest` are already normalized, so
 * this only fixes the shape; `canonicalJson` of the result is the same for every equivalent request.
 */
export function canonicalQrRequest(options: QrOptions): QrOptions {
  const { bg, content, ecc, fg, format, margin } = options;
  const canonical: QrOptions =
    'scale' in options
      ? { bg, content, ecc, fg, format, margin, scale: options.scale }
      : { bg, content, ecc, fg, format, margin, size: options.size };
  return Object.freeze(canonical);
}

/**
 * The content hash of a request: sha256 hex of the canonical JSON (RFC 8785) of
 * `{ request: canonicalQrRequest(options), renderer: RENDERER_IDENTITY }`.
 */
export function qrContentHash(options: QrOptions): string {
  return sha256Hex(canonicalJson({ request: canonicalQrRequest(options), renderer: RENDERER_IDENTITY }));
}
