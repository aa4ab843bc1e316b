/**
 * Request schemas of the run endpoints (TypeBox, validated by fastify's Ajv). Unknown body fields
 * are rejected rather than dropped, so a typo fails loudly instead of being ignored.
 */
import { Type, type Static } from '@sinclair/typebox';
import { RunStatus } from '../../core/model.ts';
import { IsoDateTime, LimitQuery, StringEnum } from './common.ts';

/** `POST /v1/runs` body. */
export const SubmitRunBody = Type.Object(
  {
    pipeline: Type.String({ minLength: 1, maxLength: 200, description: 'Registered pipeline name.' }),
    input: Type.Optional(Type.Unknown({ description: 'Pipeline input (JSON); the pipeline validates it. Default `{}`.' })),
    subjectId: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    subjectVersion: Type.Optional(Type.Integer({ minimum: 0 })),
    tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type SubmitRunBody = Static<typeof SubmitRunBody>;

/**
 * `POST /v1/runs` headers we read (others pass through). `Idempotency-Key` is read by the one
 * rule every route shares (`idempotencyKeyOf`, src/http/request-rules.ts).
 */
export const SubmitRunHeaders = Type.Object({
  traceparent: Type.Optional(Type.String({ maxLength: 200 })),
});
export type SubmitRunHeaders = Static<typeof SubmitRunHeaders>;

/** `GET /v1/runs` query: newest first, paginate with `before=<last id>`. */
export const ListRunsQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(RunStatus)),
    pipeline: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    subjectId: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Only runs of this subject.' })),
    tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only runs of this tenant.' })),
    createdAfter: Type.Optional(IsoDateTime('Only runs created at or after this time (ISO-8601 with a zone).')),
    createdBefore: Type.Optional(IsoDateTime('Only runs created before this time (ISO-8601 with a zone).')),
    before: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Keyset cursor: the last id of the previous page.' })),
    ...LimitQuery.properties,
  },
  { additionalProperties: false },
);
export type ListRunsQuery = Static<typeof ListRunsQuery>;

/** `POST /v1/runs/:id/cancel` body; the whole body is optional. */
export const CancelRunBody = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })) },
  { additionalProperties: false },
);
export type CancelRunBody = Static<typeof CancelRunBody>;
