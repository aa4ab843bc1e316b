/**
 * Checks values against the config schema and converts durations to ms. Problems come back as
 * path segments + message, so the caller can attach the source and line (file) or name (env, flag).
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { parseDurationMs } from './duration.ts';
import { isDurationSchema } from './schema.ts';
import { redactUrl } from './store-url.ts';

/** One problem with one field. */
export interface FieldProblem {
  /** Path segments from the checked root, e.g. `['pipelines', 'demo.sleep', 'stages']`. */
  path: string[];
  message: string;
  /** The key itself is wrong (unknown key), so point at the key rather than its value. */
  atKey: boolean;
}

/** Every problem of `value` against `schema`, at most one per field, in document order. */
export function validateAgainst(schema: TSchema, value: unknown): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const error of Value.Errors(schema, value)) {
    // A bad value can fail several keywords; the first says enough and one line per field reads best.
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    problems.push({
      path: decodePointer(error.path),
      message: messageFor(error),
      atKey: error.type === ValueErrorType.ObjectAdditionalProperties,
    });
  }
  return problems;
}

/**
 * Replaces every duration under `schema` by its value in ms (invalid ones by `undefined`: they are
 * already reported by {@link validateAgainst}) and reports durations below their `minimumMs`.
 */
export function normalizeDurations(schema: TSchema, value: unknown, path: string[] = [], problems: FieldProblem[] = []): { value: unknown; problems: FieldProblem[] } {
  if (isDurationSchema(schema)) {
    const ms = parseDurationMs(value);
    if (ms !== undefined && schema.minimumMs !== undefined && ms < schema.minimumMs) {
      problems.push({ path, message: `must be at least ${schema.minimumMs} ms, got ${show(value)}`, atKey: false });
    }
    return { value: ms, problems };
  }
  if (!isPlainObject(value) || schema['type'] !== 'object') return { value, problems };
  const props = (schema['properties'] ?? {}) as Record<string, TSchema>;
  const pattern = Object.values((schema['patternProperties'] ?? {}) as Record<string, TSchema>)[0];
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema = props[key] ?? pattern;
    out[key] = childSchema ? normalizeDurations(childSchema, child, [...path, key], problems).value : child;
  }
  return { value: out, problems };
}

/** True for `{...}` objects (not arrays, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON-pointer (`/a/b~1c`) to segments. */
function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A message that says what is expected and what was found, in the user's terms (YAML). */
function messageFor(error: ValueError): string {
  const schema = error.schema as TSchema & { errorMessage?: string; anyOf?: TSchema[]; properties?: Record<string, TSchema> };
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const key = decodePointer(error.path).at(-1) ?? '';
    const allowed = Object.keys(schema.properties ?? {});
    return `unknown key "${key}"${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}`;
  }
  if (typeof schema.errorMessage === 'string') {
    // A secret-bearing field (a connection URL) is shown with its password masked, never as is.
    const shown = schema['kilnSecret'] === true && typeof error.value === 'string' ? redactUrl(error.value) : show(error.value);
    return `${schema.errorMessage}, got ${shown}`;
  }
  const literals = schema.anyOf?.map((s) => s['const'] as unknown);
  if (schema[Kind] === 'Union' && literals?.every((l) => typeof l === 'string')) {
    return `must be one of ${literals.join(', ')}, got ${show(error.value)}`;
  }
  if (error.type === ValueErrorType.Object) return `must be a mapping, got ${show(error.value)}`;
  const text = error.message.charAt(0).toLowerCase() + error.message.slice(1);
  return `${text}, got ${show(error.value)}`;
}

/** A short rendering of a value for messages. */
export function show(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isPlainObject(value)) return 'a mapping';
  if (value === undefined) return 'nothing';
  // JSON.stringify(NaN) is "null", which would mislead.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
