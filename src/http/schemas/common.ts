/** Schemas shared by several endpoints. */
import { Type, type Static, type TLiteral, type TUnion } from '@sinclair/typebox';

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
