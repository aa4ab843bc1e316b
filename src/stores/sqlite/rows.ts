/**
 * Row shapes as better-sqlite3 returns them (snake_case columns, JSON as TEXT, booleans as 0/1)
 * and their mapping to the domain records of `core/model.ts` and `core/ports/`. The field
 * mapping is shared with the other SQL stores (`stores/shared/row-mapping.ts`); the TEXT
 * encoding of JSON columns is this store's own and lives here. Nothing else in the store
 * reads column names off a row (writes name them in their statement parameters).
 */
import type { JobKind, JobState, JsonValue, RunStatus, StageErrorRecord } from '../../core/model.ts';
import { createRowMapping } from '../shared/row-mapping.ts';
import type { CacheEntryRowOf, FailedAttemptRowOf, JobRowOf, LedgerRowOf, RequestRecordRowOf, RunRowOf, StageRowOf } from '../shared/row-mapping.ts';

/** A `runs` row: JSON columns as TEXT. */
export type RunRow = RunRowOf<string>;

/** A `stage_records` row: JSON columns as TEXT. */
export type StageRow = StageRowOf<string>;

/** A `jobs` row: `last_error` as TEXT, plus the SQLite-only `dead_slot`. */
export interface JobRow extends JobRowOf<string> {
  /** '' while the job is live, its own id once dead (see migration 0001). */
  dead_slot: string;
}

/** A `ledger` row: `output` as TEXT. */
export type LedgerRow = LedgerRowOf<string>;

/** A `failed_attempts` row (migration 0008): `error` as TEXT. */
export type FailedAttemptRow = FailedAttemptRowOf<string>;

/**
 * The columns of `jobs` in the order {@link jobRowFromValues} reads them, for hot statements read
 * raw (arrays): better-sqlite3 builds a row object several times slower than a literal does.
 */
export const JOB_COLUMNS =
  'id, run_id, pipeline, stage, queue, kind, state, idempotency_key, dead_slot, attempt, max_attempts, priority, ' +
  'available_at, enqueued_at, tenant, trace_id, lease_owner, lease_token, fence, lease_until, lease_ms, redeliveries, last_error, ' +
  'lock_wait_since, started_at';

/** A raw row of {@link JOB_COLUMNS} -> {@link JobRow}. */
export function jobRowFromValues(v: readonly unknown[]): JobRow {
  return {
    id: v[0] as string,
    run_id: v[1] as string,
    pipeline: v[2] as string,
    stage: v[3] as string,
    queue: v[4] as string,
    kind: v[5] as JobKind,
    state: v[6] as JobState,
    idempotency_key: v[7] as string,
    dead_slot: v[8] as string,
    attempt: v[9] as number,
    max_attempts: v[10] as number,
    priority: v[11] as number,
    available_at: v[12] as number,
    enqueued_at: v[13] as number,
    tenant: v[14] as string | null,
    trace_id: v[15] as string | null,
    lease_owner: v[16] as string | null,
    lease_token: v[17] as string | null,
    fence: v[18] as number | null,
    lease_until: v[19] as number | null,
    lease_ms: v[20] as number | null,
    redeliveries: v[21] as number,
    last_error: v[22] as string | null,
    lock_wait_since: v[23] as number | null,
    started_at: v[24] as number | null,
  };
}

/**
 * The columns of `runs` in the order {@link runRowFromValues} reads them: the claim's raw read
 * (RUN_COLUMNS) and every read of a run as derived (sql/run-columns.ts) list them from here.
 */
export const RUN_COLUMN_NAMES = [
  'id', 'pipeline', 'pipeline_version', 'status', 'current_stage', 'input', 'input_checksum', 'idempotency_key', 'subject_id',
  'subject_version', 'tenant', 'trace_id', 'trace_parent', 'error', 'created_at', 'updated_at', 'finished_at',
] as const satisfies readonly (keyof RunRow)[];

/** {@link RUN_COLUMN_NAMES} as stored, for a raw read. */
export const RUN_COLUMNS = RUN_COLUMN_NAMES.join(', ');

/**
 * A raw row of {@link RUN_COLUMNS} -> {@link RunRow}: the claim reads a run per claimed job,
 * and the driver's own row objects cost about 40% more than these arrays (13 runs a call).
 */
export function runRowFromValues(v: readonly unknown[]): RunRow {
  return {
    id: v[0] as string,
    pipeline: v[1] as string,
    pipeline_version: v[2] as number,
    status: v[3] as RunStatus,
    current_stage: v[4] as string | null,
    input: v[5] as string,
    input_checksum: v[6] as string,
    idempotency_key: v[7] as string | null,
    subject_id: v[8] as string | null,
    subject_version: v[9] as number | null,
    tenant: v[10] as string | null,
    trace_id: v[11] as string | null,
    trace_parent: v[12] as string | null,
    error: v[13] as string | null,
    created_at: v[14] as number,
    updated_at: v[15] as number,
    finished_at: v[16] as number | null,
  };
}

/** JSON for a TEXT column; `undefined` never reaches the store. */
export function toJson(value: JsonValue): string {
  return JSON.stringify(value);
}

/** JSON for a nullable TEXT column: SQL NULL stands for "not set". */
export function toJsonOrNull(value: JsonValue | StageErrorRecord | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** Parses a JSON TEXT column written by {@link toJson}. */
export function fromJson(text: string): JsonValue {
  return JSON.parse(text) as JsonValue;
}

const mapping = createRowMapping<string, string>({
  json: fromJson,
  error: (text) => JSON.parse(text) as StageErrorRecord,
});

/** Row -> `Run`. */
export const runFromRow = mapping.runFromRow;
/** Row -> `StageRecord`. */
export const stageFromRow = mapping.stageFromRow;
/** Row -> `Job` (`dead_slot` is storage only and not copied). */
export const jobFromRow = mapping.jobFromRow;
/** Row -> `LedgerEntry`. */
export const ledgerFromRow = mapping.ledgerFromRow;
/** Row -> `FailedAttempt`. */
export const failedAttemptFromRow = mapping.failedAttemptFromRow;

/** A `cache_entries` row (its stored columns; see migration 0003): JSON columns as TEXT. */
export type CacheEntryRow = CacheEntryRowOf<string>;

/** A `request_records` row (migration 0003): `value` as TEXT. */
export type RequestRecordRow = RequestRecordRowOf<string>;

/** Row -> `CacheEntry`. */
export const cacheEntryFromRow = mapping.cacheEntryFromRow;
/** Row -> `Publication`. */
export const publicationFromRow = mapping.publicationFromRow;
/** Row -> `RequestRecord`. */
export const requestRecordFromRow = mapping.requestRecordFromRow;
/** Row -> `Lock`. */
export const lockFromRow = mapping.lockFromRow;
