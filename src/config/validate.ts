/**
 * Checks values against the config schema and converts durations to ms. Problems come back as
 * path segments + message, so the caller can attach the source and line (file) or name (env, flag).
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { isDurationSchema, parseDurationMs } from './duration.ts';
import type { VariantAnnotation } from './command-schema.ts';
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
    // A union (a list or a text, a mapping or a number...) is judged by the variant the value
    // meant to be, so its mistakes are named field by field rather than as "no variant matched".
    const variant = error.type === ValueErrorType.Union ? variantFor(error.schema, error.value) : undefined;
    if (variant) {
      const at = decodePointer(error.path);
      for (const inner of validateAgainst(variant, error.value)) problems.push({ ...inner, path: [...at, ...inner.path] });
      continue;
    }
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
  if (schema[Kind] === 'Union') {
    const variant = variantFor(schema, value);
    return variant ? normalizeDurations(variant, value, path, problems) : { value, problems };
  }
  if (Array.isArray(value) && schema['type'] === 'array') {
    const items = schema['items'] as TSchema;
    return { value: value.map((item, i) => normalizeDurations(items, item, [...path, String(i)], problems).value), problems };
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

/** The JSON kind of a value, as schema `type` names it (integers are numbers). */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** The JSON kinds a schema accepts. */
function kindsOf(schema: TSchema): string[] {
  const anyOf = schema['anyOf'] as TSchema[] | undefined;
  if (anyOf) return anyOf.flatMap(kindsOf);
  const type = schema['type'] as string | undefined;
  if (type === 'integer') return ['number'];
  return type === undefined ? [] : [type];
}

/**
 * The variant of a union `value` is meant for: the one its `kilnVariant` annotation picks, else the
 * only one of the value's JSON kind. Undefined for durations (one message says it all) and when
 * no single variant fits.
 */
function variantFor(schema: TSchema, value: unknown): TSchema | undefined {
  const anyOf = schema['anyOf'] as TSchema[] | undefined;
  if (!anyOf || isDurationSchema(schema)) return undefined;
  const pick = (schema as Partial<VariantAnnotation>).kilnVariant;
  if (pick) return anyOf[pick(value)];
  const kind = kindOf(value);
  const fitting = anyOf.filter((variant) => kindsOf(variant).includes(kind));
  return fitting.length === 1 ? fitting[0] : undefined;
}

/** True for `{...}` objects (not arrays, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keys users bring from other tools, and what kiln does instead. */
const KEY_HINTS: Readonly<Record<string, string>> = {
  db: 'a run keeps all its state in the one store of kiln (store: or --store), so that each stage commits in one transaction with the next stage\'s job',
};

function hintFor(key: string): string {
  const hint = KEY_HINTS[key];
  return hint === undefined ? '' : `; ${hint}`;
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
    if (typeof schema['kilnKeyRule'] === 'string') return `"${key}" is not allowed here (keys are ${schema['kilnKeyRule']})`;
    return `unknown key "${key}"${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}${hintFor(key)}`;
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
