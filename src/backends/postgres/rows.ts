/**
 * Row shapes as `pg` returns them through kiln's type parsers (snake_case columns, `json`
 * columns already parsed, `bigint` as number) — and as `row_to_json` returns them, which is the
 * same shape — and their mapping to the domain records of `core/model.ts`. The field mapping is
 * shared with the other SQL backends (`backends/shared/row-mapping.ts`); since `pg` has parsed
 * the JSON already, decoding here is the identity. Nothing else in the backend reads column
 * names off a row.
 */
import type { JsonValue, QueueStats, StageErrorRecord } from '../../core/model.ts';
import type { CacheEntry, CacheEntryStatus, Publication, RequestRecord } from '../../core/ports.ts';
import { createRowMapping, type JobRowOf, type LedgerRowOf, type RunRowOf, type StageRowOf } from '../shared/row-mapping.ts';

/** A `runs` row: `json` columns parsed. */
export type RunRow = RunRowOf<JsonValue, StageErrorRecord>;

/** A `stage_records` row: `json` columns parsed. */
export type StageRow = StageRowOf<JsonValue, StageErrorRecord>;

/** A `jobs` row: `last_error` parsed. */
export type JobRow = JobRowOf<StageErrorRecord>;

/** A `ledger` row: `output` parsed. */
export type LedgerRow = LedgerRowOf<JsonValue>;

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

/** A `cache_entries` row (migration 0006): `json` columns parsed; `purge_at` is not read. */
export interface CacheEntryRow {
  cache: string;
  key: string;
  status: CacheEntryStatus;
  value: JsonValue | null;
  error: JsonValue | null;
  builder_owner: string | null;
  builder_token: string | null;
  builder_fence: number | null;
  builder_until: number | null;
  expires_at: number | null;
  stale_until: number | null;
  updated_at: number;
}

/** Row -> {@link CacheEntry}. */
export function cacheEntryFromRow(row: CacheEntryRow): CacheEntry {
  return {
    cache: row.cache,
    key: row.key,
    status: row.status,
    value: row.value,
    error: row.error,
    builderOwner: row.builder_owner,
    builderToken: row.builder_token,
    builderFence: row.builder_fence,
    builderUntil: row.builder_until,
    expiresAt: row.expires_at,
    staleUntil: row.stale_until,
    updatedAt: row.updated_at,
  };
}

/** A `publications` row (migrations 0002, 0007). */
export interface PublicationRow {
  subject_id: string;
  profile: string;
  artifact_ref: string;
  subject_version: number;
  fence: number;
  updated_at: number;
}

/** Row -> {@link Publication}. */
export function publicationFromRow(row: PublicationRow): Publication {
  return {
    subjectId: row.subject_id,
    profile: row.profile,
    artifactRef: row.artifact_ref,
    subjectVersion: row.subject_version,
    fence: row.fence,
    updatedAt: row.updated_at,
  };
}

/** A `request_records` row (migration 0006): `value` parsed. */
export interface RequestRecordRow {
  scope: string;
  key: string;
  request_hash: string;
  value: JsonValue;
  created_at: number;
}

/** Row -> {@link RequestRecord}. */
export function requestRecordFromRow(row: RequestRecordRow): RequestRecord {
  return { scope: row.scope, key: row.key, requestHash: row.request_hash, value: row.value, createdAt: row.created_at };
}
