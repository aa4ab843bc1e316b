/**
 * `retention:` of `kiln.yaml`: how long ended runs (with their stage records, ledger entries, jobs
 * and attempt history) and remembered client requests are kept, and how the worker's reaper
 * prunes them (see `RetentionPort`, src/engine/retention.ts, `kiln prune`).
 */
import { Type } from '@sinclair/typebox';
import type { RetentionPolicy } from '../core/ports/retention.ts';
import type { VariantAnnotation } from './command-schema.ts';
import { Duration, DURATION_MESSAGE } from './duration.ts';

/** The word that keeps a kind forever. */
export const FOREVER = 'forever';

const DAY_MS = 86_400_000;

/** The resolved `retention:` section: the policy in ms (null = forever) and the reaper's pace. */
export interface ResolvedRetention extends RetentionPolicy {
  /** At most this many runs (and request records) per prune batch, one short transaction each. */
  readonly batchSize: number;
  /** The worker prunes one batch this often (0: never; `kiln prune` still does). */
  readonly intervalMs: number;
}

/** Defaults: what most job systems keep (succeeded a week, what needs a look a month). */
export const RETENTION_DEFAULTS: ResolvedRetention = Object.freeze({
  succeededMs: 7 * DAY_MS,
  failedMs: 30 * DAY_MS,
  cancelledMs: 30 * DAY_MS,
  requestsMs: 30 * DAY_MS,
  batchSize: 100,
  intervalMs: 60_000,
});

/** A period: a duration, or `forever`. */
function Period(description: string, defaultMs: number) {
  const annotation: VariantAnnotation = { kilnVariant: (value) => (value === FOREVER ? 1 : 0) };
  const duration = { ...Duration(description, { minimumMs: 1 }), errorMessage: `${DURATION_MESSAGE}, or ${FOREVER}` };
  return Type.Union([duration, Type.Literal(FOREVER)], { ...annotation, default: defaultMs, description });
}

/** The schema of `retention:`. */
export const RetentionSchema = Type.Object(
  {
    succeeded: Type.Optional(Period('How long a succeeded run is kept after it finished (a duration such as 7d, or forever).', RETENTION_DEFAULTS.succeededMs ?? 0)),
    failed: Type.Optional(Period('How long a failed or dead-lettered run is kept after it finished (a pruned dead letter can no longer be replayed).', RETENTION_DEFAULTS.failedMs ?? 0)),
    cancelled: Type.Optional(Period('How long a cancelled or superseded run is kept after it finished.', RETENTION_DEFAULTS.cancelledMs ?? 0)),
    requests: Type.Optional(Period('How long a remembered client request (Idempotency-Key) is kept after it was first made.', RETENTION_DEFAULTS.requestsMs ?? 0)),
    batchSize: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000, default: RETENTION_DEFAULTS.batchSize, description: 'Runs (and request records) deleted per batch: one short transaction each.' }),
    ),
    interval: Type.Optional(
      Duration('A worker prunes one batch this often (0: workers never prune; kiln prune still does).', { default: RETENTION_DEFAULTS.intervalMs }),
    ),
  },
  { additionalProperties: false, default: {} },
);

/** A period field as merged (ms, `forever`, or absent) in the resolved form. */
function period(value: unknown, fallback: number | null): number | null {
  if (value === FOREVER) return null;
  return typeof value === 'number' ? value : fallback;
}

/** Resolves the merged `retention:` fields (durations already in ms). */
export function resolveRetention(raw: unknown): ResolvedRetention {
  const fields = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const d = RETENTION_DEFAULTS;
  return {
    succeededMs: period(fields['succeeded'], d.succeededMs),
    failedMs: period(fields['failed'], d.failedMs),
    cancelledMs: period(fields['cancelled'], d.cancelledMs),
    requestsMs: period(fields['requests'], d.requestsMs),
    batchSize: typeof fields['batchSize'] === 'number' ? fields['batchSize'] : d.batchSize,
    intervalMs: typeof fields['interval'] === 'number' ? fields['interval'] : d.intervalMs,
  };
}
