/**
 * The asset formats the thumbnails pipeline accepts, their canonical media types, and the
 * `Content-Type` spellings that count as declaring each of them.
 */
import { mediaTypeOf } from '../../../index.ts';

/** Accepted asset formats (the real format, sniffed from the bytes). */
export const AssetFormat = {
  png: 'png',
  jpeg: 'jpeg',
  webp: 'webp',
  gif: 'gif',
  avif: 'avif',
  tiff: 'tiff',
  svg: 'svg',
} as const;
/** One of {@link AssetFormat}'s values. */
export type AssetFormat = (typeof AssetFormat)[keyof typeof AssetFormat];

/** The canonical media type of each format. */
export const ASSET_MEDIA_TYPES: Readonly<Record<AssetFormat, string>> = Object.freeze({
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  avif: 'image/avif',
  tiff: 'image/tiff',
  svg: 'image/svg+xml',
});

/**
 * Declared media types that name each format. Besides the canonical type, the legacy and
 * vendor spellings clients still send (`image/jpg`, `image/x-png`); APNG is a PNG (its first
 * frame is a plain PNG image), so `image/apng` declares `png`.
 */
const DECLARED_ALIASES: Readonly<Record<AssetFormat, readonly string[]>> = {
  png: ['image/png', 'image/apng', 'image/x-png'],
  jpeg: ['image/jpeg', 'image/jpg', 'image/pjpeg'],
  webp: ['image/webp'],
  gif: ['image/gif'],
  avif: ['image/avif'],
  tiff: ['image/tiff', 'image/tif', 'image/x-tiff'],
  svg: ['image/svg+xml'],
};

/** Declared types that say nothing about the format: treated like no `Content-Type` at all. */
const UNDECLARED = new Set(['', 'application/octet-stream']);

/**
 * The bare media type of a `Content-Type` value: parameters dropped, lower case, trimmed;
 * `undefined` when it declares nothing (absent, empty or `application/octet-stream`).
 */
export function declaredMediaType(contentType: string | undefined): string | undefined {
  const bare = mediaTypeOf(contentType);
  return bare === undefined || UNDECLARED.has(bare) ? undefined : bare;
}

/** True when a (bare, lower-case) declared media type names `format`. */
export function declaresFormat(mediaType: string, format: AssetFormat): boolean {
  return DECLARED_ALIASES[format].includes(mediaType);
}
