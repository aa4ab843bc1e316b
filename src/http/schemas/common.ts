/** Schemas shared by several endpoints. */
import { Type, type Static, type TLiteral, type TString, type TUnion } from '@sinclair/typebox';

/** `:id` of a run or job. */
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
export type IdParams = Static<typeof IdParams>;

/** Page size of list endpoints. */
export const LimitQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

/** One of the string values of a const-object enum (`RunStatus`, `JobState`). */
export function StringEnum<T extends Record<string, string>>(values: T): TUnion<TLiteral<T[keyof T]>[]> {
  return Type.Union(Object.values(values).map((v) => Type.Literal(v as T[keyof T])));
}

/** An ISO-8601 date-time with a zone (`2026-01-01T12:00:00Z`, `...T12:00:00.123+02:00`). */
export function IsoDateTime(description: string): TString {
  return Type.String({ maxLength: 40, pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$', description });
}
