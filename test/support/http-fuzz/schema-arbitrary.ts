/**
 * Valid-looking values from a route's own request schema (TypeBox, i.e. JSON Schema): what the
 * fuzzer sends to get past validation into the handler. Known names (`id`, `queue`, `runId`, ...)
 * also draw from the values seeded into the store, so a handler finds something.
 */
import fc from 'fast-check';

/** The JSON Schema keywords TypeBox emits for the request schemas kiln uses. */
interface Schema {
  type?: string;
  const?: unknown;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
}

/** Known-good values by field name (seeded ids, queue names, ...). */
export type Hints = Readonly<Record<string, fc.Arbitrary<unknown> | undefined>>;

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  if (schema.pattern !== undefined) {
    const max = schema.maxLength ?? Number.POSITIVE_INFINITY;
    return fc.stringMatching(new RegExp(schema.pattern), { size: 'xsmall' }).filter((s) => s.length >= min && s.length <= max);
  }
  const max = schema.maxLength ?? 40;
  return fc.oneof(
    { arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, 24) }), weight: 4 },
    { arbitrary: fc.constant('x'.repeat(Math.max(min, Math.min(max, 10_000)))), weight: 1 },
  );
}

/** An arbitrary of values `schema` accepts (nearly always: patterns and bounds are honoured). */
export function valueOf(schema: Schema, hints: Hints = {}, name?: string): fc.Arbitrary<unknown> {
  const hint = name === undefined ? undefined : hints[name];
  const own = ownValueOf(schema, hints);
  return hint ? fc.oneof({ arbitrary: hint, weight: 3 }, { arbitrary: own, weight: 1 }) : own;
}

function ownValueOf(schema: Schema, hints: Hints): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => valueOf(s, hints)));
  switch (schema.type) {
    case 'object': {
      const properties = schema.properties ?? {};
      const model = Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, valueOf(s, hints, k)]));
      return fc.record(model, { requiredKeys: schema.required ?? [] });
    }
    case 'string':
      return stringOf(schema);
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? -1_000;
      const max = schema.maximum ?? Math.max(min, 0) + 100_000;
      const edges = fc.constantFrom(min, max);
      const any = schema.type === 'integer' ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true });
      return fc.oneof(any, edges);
    }
    case 'boolean':
      return fc.boolean();
    default:
      // Type.Unknown: any JSON.
      return fc.jsonValue({ maxDepth: 3 });
  }
}

/** As query-string or path text: every value a string. */
export function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? '';
}

/** The properties of an object schema, by name (empty for none). */
export function propertiesOf(schema: unknown): Record<string, Schema> {
  return (schema as Schema | undefined)?.properties ?? {};
}

/** Valid-looking query pairs of a querystring schema. */
export function queryPairsOf(schema: unknown, hints: Hints): fc.Arbitrary<(readonly [string, string])[]> {
  if (schema === undefined) return fc.constant([]);
  return valueOf(schema as Schema, hints).map((v) => Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, textOf(x)] as const));
}
