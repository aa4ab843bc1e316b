/**
 * Durations in `kiln.yaml`: every `*Ms` field takes either a non-negative integer of milliseconds
 * or a string with a unit (`"250ms"`, `"2s"`, `"1.5m"`, `"1h"`, `"7d"`). Resolved config holds milliseconds.
 */

import { Type, type TSchema } from '@sinclair/typebox';

/** Milliseconds per accepted unit. */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * The accepted string form, as a JSON Schema `pattern`: a non-negative decimal and a unit.
 * A minus sign never matches, so negative durations fail schema validation.
 */
export const DURATION_PATTERN = '^(0|[1-9][0-9]*)(\\.[0-9]+)?(ms|s|m|h|d)$';

const DURATION_RE = new RegExp(DURATION_PATTERN);

/** Message used wherever a duration is rejected, so file, env and flags read alike. */
export const DURATION_MESSAGE =
  'must be a non-negative integer of milliseconds or a duration string like "250ms", "2s", "1m", "1h"';

/**
 * Converts a duration to whole milliseconds, or returns `undefined` when the value is not a
 * valid duration (negative, fractional milliseconds, unknown unit, wrong type).
 */
export function parseDurationMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = DURATION_RE.exec(value);
  if (!match) return undefined;
  const unit = match[3] as keyof typeof UNIT_MS;
  const fraction = (match[2] ?? '.').slice(1);
  // Scale to an integer first: 1.1 * 1000 is 1100.0000000000002 in floating point, 11 * 1000 / 10 is not.
  const scale = 10 ** fraction.length;
  const ms = (Number(match[1] ?? '0') * scale + Number(fraction || '0')) * UNIT_MS[unit] / scale;
  // "1.5ms" has no whole-millisecond meaning; rounding it silently would hide a typo.
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** Schema annotation marking a duration field (see {@link Duration}). */
export interface DurationAnnotation {
  kilnDuration: true;
  /** Smallest accepted value once converted, in ms (0 unless stated). */
  minimumMs?: number;
  errorMessage: string;
}

/**
 * A duration field: integer ms or a string with a unit. Resolved config holds ms.
 * The `kilnDuration` annotation tells the loader which fields to convert.
 */
export function Duration(description: string, extra: { default?: number; minimumMs?: number } = {}) {
  const annotation: DurationAnnotation = { kilnDuration: true, errorMessage: DURATION_MESSAGE };
  if (extra.minimumMs !== undefined) annotation.minimumMs = extra.minimumMs;
  return Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: DURATION_PATTERN })], {
    description,
    ...(extra.default === undefined ? {} : { default: extra.default }),
    ...annotation,
  });
}

/** True when `schema` was built by {@link Duration}. */
export function isDurationSchema(schema: TSchema): schema is TSchema & DurationAnnotation {
  return (schema as Partial<DurationAnnotation>).kilnDuration === true;
}
