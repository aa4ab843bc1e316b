/**
 * Request validation with TypeBox's compiler instead of fastify's Ajv defaults. The point is
 * per-part coercion: query strings are text, so `limit=5` is converted to a number there, while
 * JSON bodies are checked as sent (Ajv's global `coerceTypes` would quietly turn `{"pipeline": 7}`
 * into `"7"`). Errors come back Ajv-shaped so the error envelope names each field.
 *
 * Two integer rules hold for every part: a query-string integer is read by the one parser
 * (`parseQueryInteger`: plain decimal digits, so `2.5` and `1e2` are refused, not truncated), and
 * an integer anywhere must be a safe integer (a JSON number above 2^53 has already been rounded).
 */
import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type ValueError } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import { parseQueryInteger, QUERY_INTEGER_MESSAGE } from './request-rules.ts';

/** One failed check, as the error envelope reads it (`instancePath` is a JSON pointer). */
export interface RequestIssue {
  instancePath: string;
  message: string;
}

/** A readable message for one TypeBox error. */
function describe(error: ValueError): string {
  if (error.type === ValueErrorType.ObjectRequiredProperty) return 'is required';
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return 'is not allowed';
  const options = (error.schema.anyOf as { const?: unknown }[] | undefined)?.map((s) => s.const);
  if (error.type === ValueErrorType.Union && options?.every((o) => typeof o === 'string')) {
    return `must be one of ${options.join(', ')}`;
  }
  return error.message.replace(/^Expected\b/, 'expected');
}

/** The first problem at each path (a missing field also fails its type check; say it once). */
function issues(errors: Iterable<ValueError>): RequestIssue[] {
  const byPath = new Map<string, RequestIssue>();
  for (const error of errors) {
    if (!byPath.has(error.path)) byPath.set(error.path, { instancePath: error.path, message: describe(error) });
  }
  return [...byPath.values()];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Escapes one JSON pointer segment (RFC 6901). */
function pointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * Reads the query string's integer parameters with {@link parseQueryInteger}, before TypeBox's
 * lenient conversion sees them; a value it refuses is an issue naming the parameter.
 */
function parseQueryIntegers(schema: TSchema, data: unknown): { data: unknown; problems: RequestIssue[] } {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties;
  if (!properties || !isRecord(data)) return { data, problems: [] };
  const out: Record<string, unknown> = { ...data };
  const problems: RequestIssue[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const text = out[name];
    if (property.type !== 'integer' || typeof text !== 'string') continue;
    const parsed = parseQueryInteger(text);
    if (parsed === undefined) problems.push({ instancePath: `/${pointer(name)}`, message: QUERY_INTEGER_MESSAGE });
    else out[name] = parsed;
  }
  return { data: out, problems };
}

/** Integers beyond ±(2^53 - 1) where the schema wants an integer (JSON parsing has rounded them). */
function unsafeIntegers(schema: TSchema, value: unknown, path: string, found: RequestIssue[]): RequestIssue[] {
  if (schema.type === 'integer' && typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    found.push({ instancePath: path, message: 'must be a safe integer (at most 2^53 - 1 in magnitude)' });
  }
  const properties = (schema as { properties?: Record<string, TSchema> }).properties;
  if (properties && isRecord(value)) {
    for (const [name, property] of Object.entries(properties)) {
      if (Object.hasOwn(value, name)) unsafeIntegers(property, value[name], `${path}/${pointer(name)}`, found);
    }
  }
  const items = (schema as { items?: TSchema }).items;
  if (items && !Array.isArray(items) && Array.isArray(value)) value.forEach((item, i) => unsafeIntegers(items, item, `${path}/${i}`, found));
  return found;
}

/** fastify validator compiler for TypeBox schemas. */
export const typeboxValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  const convert = httpPart === 'querystring';
  return (data: unknown) => {
    let input = data;
    if (convert) {
      const parsed = parseQueryIntegers(schema, data);
      if (parsed.problems.length > 0) return { error: parsed.problems as never };
      input = parsed.data;
    }
    // Value.Default fills defaults in place; Value.Convert returns a converted copy.
    const value = Value.Default(schema, convert ? Value.Convert(schema, input) : input);
    const unsafe = unsafeIntegers(schema, value, '', []);
    if (unsafe.length > 0) return { error: unsafe as never };
    if (check.Check(value)) return { value };
    return { error: issues(check.Errors(value)) as never };
  };
};
