/**
 * QR request validation: a JSON body or a query string in, normalized {@link QrOptions} out
 * (defaults filled in, enums and colors in their canonical spelling), or a typed error:
 * 400 `VALIDATION_FAILED` naming every bad or unknown field at once, 422 when the request is
 * well-formed but cannot be drawn (`QR_CONTENT_TOO_LONG`, `QR_COLORS_UNREADABLE`,
 * `QR_SIZE_TOO_SMALL`, `QR_SIZE_TOO_LARGE`).
 */
import { parseQueryInteger, UnprocessableError, ValidationError } from '../../index.ts';
import { QrEcc } from './capacity.ts';
import { normalizeColor } from './color.ts';
import { planQrLayout, QR_MAX_IMAGE_SIZE_PX } from './layout.ts';

/** Output formats. */
export const QrFormat = { png: 'png', svg: 'svg' } as const;
/** One of {@link QrFormat}'s values. */
export type QrFormat = (typeof QrFormat)[keyof typeof QrFormat];

/** Where a request came from: a JSON body (typed values) or a query string (every value a string). */
export const QrRequestSource = { json: 'json', query: 'query' } as const;
/** One of {@link QrRequestSource}'s values. */
export type QrRequestSource = (typeof QrRequestSource)[keyof typeof QrRequestSource];

/**
 * The fields every request has once normalized. (Type aliases rather than interfaces, so options
 * are assignable to kiln's `JsonValue` and can be a run's input as they are.)
 */
export type QrOptionsBase = {
  /** The text to encode (1 or more UTF-8 bytes, at most `QR_MAX_CONTENT_BYTES[ecc]`). */
  content: string;
  format: QrFormat;
  /** Error-correction level. */
  ecc: QrEcc;
  /** Quiet zone on each side, in modules. */
  margin: number;
  /** Dark-module color, lowercase `#rrggbbaa`. */
  fg: string;
  /** Background (light modules and quiet zone) color, lowercase `#rrggbbaa`. */
  bg: string;
};

/**
 * A validated, normalized QR request. Exactly one of `size` (image side in px; the modules get
 * whole pixels and the rest becomes quiet zone) or `scale` (px per module) is present: narrow
 * with `'scale' in options`.
 */
export type QrOptions = QrOptionsBase & ({ size: number } | { scale: number });

/** Defaults of the optional fields (`scale` has none: without it, `size` applies). */
export const QR_DEFAULTS = Object.freeze({
  format: QrFormat.png,
  size: 512,
  margin: 4,
  ecc: QrEcc.M,
  fg: '#000000ff',
  bg: '#ffffffff',
} as const);

/** Inclusive integer ranges of the numeric fields. */
export const QR_RANGES = Object.freeze({
  size: Object.freeze({ min: 64, max: QR_MAX_IMAGE_SIZE_PX }),
  scale: Object.freeze({ min: 1, max: 64 }),
  margin: Object.freeze({ min: 0, max: 16 }),
});

/** Every accepted field name. */
export const QR_FIELDS: readonly string[] = Object.freeze(['bg', 'content', 'ecc', 'fg', 'format', 'margin', 'scale', 'size']);

/** One problem with one field, as in kiln's other `VALIDATION_FAILED` errors. */
export interface QrRequestIssue {
  field: string;
  message: string;
}

/** Lone UTF-16 surrogates cannot be encoded as UTF-8 (TextEncoder would turn them into U+FFFD). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Validates and normalizes a QR request. `source` says how to read values: `json` takes JSON
 * types (numbers as numbers), `query` takes strings only and parses numbers strictly (`12abc`,
 * `1e3`, `+5` and `012` are errors). Enum values are case-insensitive; colors accept `#rgb`,
 * `#rrggbb` and `#rrggbbaa`.
 *
 * @throws ValidationError `VALIDATION_FAILED` (400), `details.issues` naming each field, and
 *   `details.unknownFields` listing unknown ones.
 * @throws UnprocessableError (422) `QR_COLORS_UNREADABLE` when `fg` equals `bg` (or both are fully
 *   transparent), or a layout error (see `planQrLayout`).
 */
export function parseQrRequest(raw: unknown, source: QrRequestSource): QrOptions {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    const what = source === QrRequestSource.json ? 'the request body must be a JSON object' : 'the query string must be a set of parameters';
    throw new ValidationError(`invalid QR request: ${what}`, { details: { issues: [{ field: '(root)', message: what }] } });
  }
  const fields = raw as Record<string, unknown>;
  const issues: QrRequestIssue[] = [];
  const unknownFields = Object.keys(fields).filter((key) => !QR_FIELDS.includes(key)).sort();
  for (const field of unknownFields) issues.push({ field, message: 'is not a known field' });
  const read = createFieldReader(fields, source, issues);
  const options = readOptions(read, issues);
  if (issues.length > 0 || options === undefined) {
    const details: Record<string, unknown> = { issues };
    if (unknownFields.length > 0) details.unknownFields = unknownFields;
    throw new ValidationError(`invalid QR request: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`, { details });
  }
  planQrLayout(options);
  assertReadableColors(options.fg, options.bg);
  return Object.freeze(options);
}

/**
 * Throws `QR_COLORS_UNREADABLE` when the two colors cannot be told apart: the same color, or both
 * fully transparent (whatever their RGB, nothing would be drawn).
 */
function assertReadableColors(fg: string, bg: string): void {
  const invisible = (color: string): boolean => color.endsWith('00');
  if (fg !== bg && !(invisible(fg) && invisible(bg))) return;
  const why = fg === bg ? `fg and bg are the same color (${fg})` : `fg (${fg}) and bg (${bg}) are both fully transparent`;
  throw new UnprocessableError('QR_COLORS_UNREADABLE', `${why}, so the code would be invisible`, { details: { fg, bg } });
}

/** Reads each field with its rule; `undefined` fields were absent or bad (then an issue says so). */
function readOptions(read: FieldReader, issues: QrRequestIssue[]): QrOptions | undefined {
  const content = read.content();
  const format = read.choice('format', Object.values(QrFormat), (s) => s.toLowerCase()) ?? QR_DEFAULTS.format;
  const ecc = read.choice('ecc', Object.values(QrEcc), (s) => s.toUpperCase()) ?? QR_DEFAULTS.ecc;
  const size = read.integer('size', QR_RANGES.size);
  const scale = read.integer('scale', QR_RANGES.scale);
  const margin = read.integer('margin', QR_RANGES.margin) ?? QR_DEFAULTS.margin;
  const fg = read.color('fg') ?? QR_DEFAULTS.fg;
  const bg = read.color('bg') ?? QR_DEFAULTS.bg;
  if (size !== undefined && scale !== undefined) issues.push({ field: 'scale', message: 'cannot be given together with size (give one of them)' });
  if (content === undefined) return undefined;
  const base: QrOptionsBase = { content, format, ecc, margin, fg, bg };
  return scale === undefined ? { ...base, size: size ?? QR_DEFAULTS.size } : { ...base, scale };
}

interface FieldReader {
  content(): string | undefined;
  choice<T extends string>(field: string, allowed: readonly T[], normalize: (value: string) => string): T | undefined;
  integer(field: string, range: { min: number; max: number }): number | undefined;
  color(field: string): string | undefined;
}

/** Field readers bound to one request: each returns the normalized value, or records an issue. */
function createFieldReader(fields: Record<string, unknown>, source: QrRequestSource, issues: QrRequestIssue[]): FieldReader {
  const valueOf = (field: string): unknown => (Object.hasOwn(fields, field) ? fields[field] : undefined);
  const problem = (field: string, message: string): undefined => {
    const value = valueOf(field);
    issues.push({ field, message: value === undefined ? message : `${message}, got ${describeValue(value)}` });
    return undefined;
  };
  /** The string value of an optional field, `undefined` when absent; records an issue for non-strings. */
  const stringOf = (field: string, expected: string): string | undefined => {
    const value = valueOf(field);
    if (value === undefined) return undefined;
    if (typeof value === 'string') return value;
    return problem(field, Array.isArray(value) && source === QrRequestSource.query ? `must be given once (${expected})` : `must be ${expected}`);
  };
  return {
    content() {
      const expected = 'a non-empty string';
      if (valueOf('content') === undefined) return problem('content', `is required (${expected})`);
      const value = stringOf('content', expected);
      if (value === undefined) return undefined;
      if (value.length === 0) return problem('content', `must be ${expected}`);
      if (LONE_SURROGATE.test(value)) return problem('content', 'must be valid Unicode (it contains a lone surrogate, which has no UTF-8 form)');
      return value;
    },
    choice(field, allowed, normalize) {
      const expected = `one of ${allowed.join(', ')} (any case)`;
      const value = stringOf(field, expected);
      if (value === undefined) return undefined;
      const normalized = normalize(value);
      return allowed.find((option) => option === normalized) ?? problem(field, `must be ${expected}`);
    },
    integer(field, range) {
      const expected = `an integer from ${range.min} to ${range.max}`;
      let value = valueOf(field);
      if (value === undefined) return undefined;
      if (source === QrRequestSource.query) {
        const text = stringOf(field, expected);
        // undefined here means stringOf already recorded why (a repeated parameter).
        if (text === undefined) return undefined;
        // The one query-integer rule of every route (no exponent, fraction, spaces or leading zeros).
        value = parseQueryInteger(text) ?? Number.NaN;
      }
      if (typeof value === 'number' && Number.isInteger(value) && value >= range.min && value <= range.max) return value;
      return problem(field, `must be ${expected}`);
    },
    color(field) {
      const expected = 'a color #rgb, #rrggbb or #rrggbbaa';
      const value = stringOf(field, expected);
      if (value === undefined) return undefined;
      return normalizeColor(value) ?? problem(field, `must be ${expected}`);
    },
  };
}

/** A short, safe rendering of a received value for error messages (long strings are cut). */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}… (${value.length} characters)` : JSON.stringify(value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
