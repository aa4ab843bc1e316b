/**
 * The input of a run of a command pipeline: a JSON object, checked against the pipeline's
 * declared `inputs` when it has any (unknown fields, missing required ones and wrong types are a
 * `ValidationError` listing every problem), with defaults filled in.
 */
import { ValidationError } from '../core/errors.ts';
import type { JsonValue } from '../core/model.ts';
import { InputType, type InputSpec } from './command-spec.ts';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: InputType): boolean {
  switch (type) {
    case InputType.string:
      return typeof value === 'string';
    case InputType.number:
      return typeof value === 'number' && Number.isFinite(value);
    case InputType.integer:
      return typeof value === 'number' && Number.isSafeInteger(value);
    case InputType.boolean:
      return typeof value === 'boolean';
    case InputType.object:
      return isObject(value);
    case InputType.array:
      return Array.isArray(value);
    case InputType.any:
      return true;
  }
}

/** Checks and normalises a run's input (absent input is `{}`). */
export function parseCommandInput(pipeline: string, inputs: Readonly<Record<string, InputSpec>> | null, raw: unknown): JsonValue {
  const value = raw === undefined || raw === null ? {} : raw;
  if (!isObject(value)) throw new ValidationError(`input of ${pipeline} must be a JSON object`);
  // A JSON round trip drops what JSON cannot hold (functions, undefined) the way submission would.
  const input = JSON.parse(JSON.stringify(value)) as Record<string, JsonValue>;
  if (inputs === null) return input;
  const problems: string[] = [];
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(inputs, key)) problems.push(`unknown input ${key} (declared: ${Object.keys(inputs).join(', ') || 'none'})`);
  }
  for (const [name, spec] of Object.entries(inputs)) {
    if (!Object.hasOwn(input, name)) {
      if (spec.default !== undefined) input[name] = spec.default;
      else if (spec.required) problems.push(`input ${name} is required`);
      continue;
    }
    if (!hasType(input[name], spec.type)) problems.push(`input ${name} must be ${spec.type === InputType.integer ? 'an integer' : `a ${spec.type}`}`);
  }
  if (problems.length > 0) throw new ValidationError(`invalid input of ${pipeline}: ${problems.join('; ')}`, { details: { problems } });
  return input;
}
