/**
 * Row shapes as `pg` returns them through kiln's type parsers (snake_case columns, `json`
 * columns already parsed, `bigint` as number) — and as `row_to_json` returns them, which is the
 * same shape — and their mapping to the domain records of `core/model.ts`. The field mapping is
 * shared with the other SQL stores (`stores/shared/row-mapping.ts`); since `pg` has parsed
 * the JSON already, decoding here is the identity. Nothing else in the store reads column
 * names off a row.
 */
import type { JsonValue, QueueStats, StageErrorRecord } from '../../core/model.ts';
import { createRowMapping } from '../shared/row-mapping.ts';
import type { CacheEntryRowOf, FailedAttemptRowOf, JobRowOf, LedgerRowOf, RequestRecordRowOf, RunRowOf, StageRowOf } from '../shared/row-mapping.ts';

/** A `runs` row: `json` columns parsed. */
export type RunRow = RunRowOf<JsonValue, StageErrorRecord>;

/** A `stage_records` row: `json` columns parsed. */
export type StageRow = StageRowOf<JsonValue, StageErrorRecord>;

/** A `jobs` row: `last_error` parsed. */
export type JobRow = JobRowOf<StageErrorRecord>;

/** A `ledger` row: `output` parsed. */
export type LedgerRow = LedgerRowOf<JsonValue>;

/** A `failed_attempts` row: `error` parsed. */
export type FailedAttemptRow = FailedAttemptRowOf<StageErrorRecord>;

/** A row of the queue-stats query: the counts of {@link QueueStats}, and the oldest ready age (NULL when none). */
export type QueueStatsRow = Omit<QueueStats, 'oldestReadyAgeMs'> & { oldest_ready_age_ms: number | null };

/**
 * JSON text for a `json` parameter. `undefined` (not JSON, but a caller may pass it for "no
 * output") is stored as `null`.
 */
export function toJsonText(value: JsonValue | undefined): string {
  return JSON.stringify(value ?? null);
}

/** Only the record's own fields: an Error-like object passed in must not leak extra keys. */
export function errorJsonText(error: StageErrorRecord): string {
  const { class: errorClass, code, message } = error;
  return JSON.stringify({ class: errorClass, code, message } satisfies StageErrorRecord);
}

const mapping = createRowMapping<JsonValue, StageErrorRecord>({
  json: (value) => value,
  error: (value) => value,
});

/** Row -> `Run`. */
export const runFromRow = mapping.runFromRow;
/** Row -> `StageRecord`. */
export const stageFromRow = mapping.stageFromRow;
/** Row -> `Job`. */
export const jobFromRow = mapping.jobFromRow;
/** Row -> `LedgerEntry`. */
export const ledgerFromRow = mapping.ledgerFromRow;
/** Row -> `FailedAttempt`. */
export const failedAttemptFromRow = mapping.failedAttemptFromRow;

/** Row -> {@link QueueStats}. */
export function queueStatsFromRow(row: QueueStatsRow): QueueStats {
  return {
    queue: row.queue,
    paused: row.paused,
    ready: row.ready,
    scheduled: row.scheduled,
    leased: row.leased,
    parked: row.parked,
    dead: row.dead,
    oldestReadyAgeMs: row.oldest_ready_age_ms ?? 0,
  };
}

/** A `cache_entries` row: `json` columns parsed; `purge_at` is not read. */
export type CacheEntryRow = CacheEntryRowOf<JsonValue>;

/** A `request_records` row: `value` parsed. */
export type RequestRecordRow = RequestRecordRowOf<JsonValue>;

/** Row -> `CacheEntry`. */
export const cacheEntryFromRow = mapping.cacheEntryFromRow;
/** Row -> `Publication`. */
export const publicationFromRow = mapping.publicationFromRow;
/** Row -> `RequestRecord`. */
export const requestRecordFromRow = mapping.requestRecordFromRow;
/** Row -> `Lock`. */
export const lockFromRow = mapping.lockFromRow;
