/**
 * What an SVG may point at, as the sanitizer decides it: only same-document `#fragment`
 * references, in `href` and in `url(...)`, and — on `<image>`/`<feImage>` only — `data:` URLs
 * whose decoded bytes really are a PNG, JPEG, GIF or WebP of bounded size. Everything else
 * (http(s), `file:`, absolute or relative paths, nested SVG, other data) is an external
 * reference and is removed. resvg reads local files by path for `<image href>`, so this file is
 * the guard between an uploaded SVG and the worker's file system.
 */
import { readHeaderSize } from './header-size.ts';

/** `#` and an id: no whitespace, quotes, parentheses, backslashes or second `#`. */
const FRAGMENT = /^#[^\s"'()<>\\#]+$/u;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Raster formats an SVG may embed, with the signature test of their bytes. */
const EMBEDDABLE: ReadonlyArray<{ mediaType: string; sizeType: string; matches: (b: Uint8Array) => boolean }> = [
  { mediaType: 'image/png', sizeType: 'png', matches: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mediaType: 'image/jpeg', sizeType: 'jpg', matches: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { mediaType: 'image/gif', sizeType: 'gif', matches: (b) => ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a' },
  { mediaType: 'image/webp', sizeType: 'webp', matches: (b) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP' },
];
const EMBEDDABLE_DECLARED = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/gif', 'image/webp']);

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return String.fromCharCode(...bytes.subarray(start, end));
}

/** True for a same-document reference such as `#gradient-1`. */
export function isFragmentReference(value: string): boolean {
  return FRAGMENT.test(value.trim());
}

/** The id a same-document reference points at (`#a` -> `a`), or undefined for anything else. */
export function fragmentId(value: string): string | undefined {
  const trimmed = value.trim();
  return FRAGMENT.test(trimmed) ? trimmed.slice(1) : undefined;
}

/**
 * Every `url(...)` argument in a presentation attribute or CSS text, unquoted and trimmed, or
 * null when one is unterminated (which the caller treats as unsafe).
 */
export function urlArguments(text: string): string[] | null {
  const args: string[] = [];
  const opener = /url\s*\(/gi;
  for (let match = opener.exec(text); match !== null; match = opener.exec(text)) {
    const rest = text.slice(opener.lastIndex);
    const body = rest.trimStart();
    const quote = body[0] === '"' || body[0] === "'" ? body[0] : undefined;
    const end = quote === undefined ? body.indexOf(')') : body.indexOf(quote, 1);
    if (end < 0) return null;
    args.push((quote === undefined ? body.slice(0, end) : body.slice(1, end)).trim());
    // Continue after this argument, so a `url(` quoted inside it is not scanned twice.
    opener.lastIndex += rest.length - body.length + end + 1;
  }
  return args;
}

/** True when every `url(...)` in `text` is a same-document fragment (vacuously true without any). */
export function hasOnlyFragmentUrls(text: string): boolean {
  const args = urlArguments(text);
  return args !== null && args.every(isFragmentReference);
}

/**
 * The canonical form (`data:<sniffed type>;base64,<payload>`) of a `data:` URL that holds a PNG,
 * JPEG, GIF or WebP with at most `maxPixels` pixels, or null for anything else. The bytes decide
 * the type, as for uploads; a pixel bound matters because resvg decodes embedded images in full.
 */
export function canonicalEmbeddedImage(value: string, maxPixels: number): string | null {
  const trimmed = value.trim();
  const comma = trimmed.indexOf(',');
  if (!/^data:/i.test(trimmed) || comma < 0) return null;
  const header = trimmed.slice(5, comma).toLowerCase().split(';');
  if (!EMBEDDABLE_DECLARED.has(header[0] ?? '') || header.at(-1) !== 'base64') return null;
  const payload = trimmed.slice(comma + 1).replace(/[ \t\n\r\f]/g, '');
  if (!BASE64.test(payload) || payload.length % 4 !== 0) return null;
  const bytes = Buffer.from(payload, 'base64');
  const format = EMBEDDABLE.find((f) => f.matches(bytes));
  if (!format) return null;
  try {
    const size = readHeaderSize(bytes);
    if (size.type !== format.sizeType || size.width < 1 || size.height < 1 || size.width * size.height > maxPixels) return null;
  } catch {
    return null;
  }
  return `data:${format.mediaType};base64,${bytes.toString('base64')}`;
}
