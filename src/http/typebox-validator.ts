/**
 * Request validation with TypeBox's compiler instead of fastify's Ajv defaults. The point is
 * per-part coercion: query strings are text, so `limit=5` is converted to a number there, while
 * JSON bodies are checked as sent (Ajv's global `coerceTypes` would quietly turn `{"pipeline": 7}`
 * into `"7"`). Errors come back Ajv-shaped so the error envelope names each field.
 */
import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type ValueError } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

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

/** fastify validator compiler for TypeBox schemas. */
export const typeboxValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  const convert = httpPart === 'querystring';
  return (data: unknown) => {
    // Value.Default fills defaults in place; Value.Convert returns a converted copy.
    const value = Value.Default(schema, convert ? Value.Convert(schema, data) : data);
    if (check.Check(value)) return { value };
    return { error: issues(check.Errors(value)) as never };
  };
};
