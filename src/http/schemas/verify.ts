/**
 * Schemas of `GET /v1/verify`, the invariant audit: its query (which checks, the graces, how
 * many violations to list) and its answer (the report, `VerifyReportView`).
 */
import { Type, type Static } from '@sinclair/typebox';
import { VERIFY_CHECKS, VerifyCheck, ViolationKind } from '../../engine/verify/verify-types.ts';
import { StringEnum } from './common.ts';

const CHECK_NAMES = VERIFY_CHECKS.join('|');

/** `GET /v1/verify` query. */
export const VerifyQuery = Type.Object(
  {
    checks: Type.Optional(
      Type.String({
        pattern: `^(${CHECK_NAMES})(,(${CHECK_NAMES}))*$`,
        description: `Comma-separated checks to run (default all): ${VERIFY_CHECKS.join(', ')}.`,
      }),
    ),
    leaseGraceMs: Type.Optional(Type.Integer({ minimum: 0, description: 'A job still leased longer than this after its lease ended is a violation (default 60000).' })),
    tempGraceMs: Type.Optional(Type.Integer({ minimum: 0, description: 'A temp file last written longer ago than this is a violation (default worker.tempGraceMs).' })),
    maxViolations: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, default: 1_000, description: 'Violations listed at most (all are counted).' })),
  },
  { additionalProperties: false },
);
export type VerifyQuery = Static<typeof VerifyQuery>;

const Id = Type.String();

/** One violation of the report. */
export const ViolationSchema = Type.Object({
  kind: StringEnum(ViolationKind),
  check: StringEnum(VerifyCheck),
  message: Type.String(),
  ids: Type.Object({
    runId: Type.Optional(Id),
    jobId: Type.Optional(Id),
    jobIds: Type.Optional(Type.Array(Id)),
    stage: Type.Optional(Id),
    subjectId: Type.Optional(Id),
    profile: Type.Optional(Id),
    cache: Type.Optional(Id),
    key: Type.Optional(Id),
    artifactRef: Type.Optional(Id),
    ledgerKey: Type.Optional(Id),
    tempPath: Type.Optional(Id),
  }),
  details: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])),
});

/** `GET /v1/verify` answer (200 whether or not violations were found: `ok` says). */
export const VerifyReportSchema = Type.Object({
  ok: Type.Boolean({ description: 'Every check ran to the end and found nothing.' }),
  complete: Type.Boolean({ description: 'False when the audit ran out of time (http.requestTimeoutMs) before reading everything.' }),
  startedAt: Type.String(),
  durationMs: Type.Number(),
  leaseGraceMs: Type.Number(),
  tempGraceMs: Type.Number(),
  checks: Type.Array(
    Type.Object({ check: StringEnum(VerifyCheck), scanned: Type.Integer(), violations: Type.Integer(), complete: Type.Boolean() }),
  ),
  violationCount: Type.Integer(),
  violations: Type.Array(ViolationSchema),
});
