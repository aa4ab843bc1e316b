/**
 * Row shapes as better-sqlite3 returns them (snake_case columns, JSON as TEXT, booleans as 0/1)
 * and their mapping to the domain records of `core/model.ts` and `core/ports/`. The field
 * mapping is shared with the other SQL stores (`stores/shared/row-mapping.ts`); the TEXT
 * encoding of JSON columns is this store's own and lives here. Nothing else in the store
 * reads column names off a row (writes name them in their statement parameters).
 */
import type { JsonValue, StageErrorRecord } from '../../core/model.ts';
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

/** A hot statement's row read raw (an array) instead of as better-sqlite3's row object. */
export interface RawRowReader<Row> {
  /** The columns, comma-separated, for the statement's SELECT list. */
  columns: string;
  /** The row the statement returned as an array (in `columns` order) -> the row object. */
  fromValues(values: readonly unknown[]): Row;
}

/**
 * The reader of the columns `names` of a row type: its SELECT list and its decoder both come from
 * `names`, so they cannot disagree. better-sqlite3 builds a row object several times slower than
 * an object literal does, and a loop over the names is ~50x slower again (2.0 µs vs 0.04 µs a row
 * of 25 columns, measured), so the decoder is that literal, generated once from the names
 * (identifiers checked: they are also spliced into SQL).
 */
function rawRowReader<Row>(names: readonly (keyof Row & string)[]): RawRowReader<Row> {
  for (const name of names) if (!/^[a-z_]+$/.test(name)) throw new Error(`not a column name: ${name}`);
  const fromValues = new Function('v', `return { ${names.map((name, i) => `${name}: v[${i}]`).join(', ')} };`) as (values: readonly unknown[]) => Row;
  return { columns: names.join(', '), fromValues };
}

/** Every column of `jobs`, in table order, for the claim's raw picks (sql/jobs.ts). */
export const RAW_JOB = rawRowReader<JobRow>([
  'id', 'run_id', 'pipeline', 'stage', 'queue', 'kind', 'state', 'idempotency_key', 'dead_slot', 'attempt', 'max_attempts',
  'priority', 'available_at', 'enqueued_at', 'tenant', 'trace_id', 'lease_owner', 'lease_token', 'fence', 'lease_until',
  'lease_ms', 'redeliveries', 'last_error', 'lock_wait_since', 'started_at',
]);

/**
 * The columns of `runs`: the claim's raw read of its runs (RAW_RUN) and every read of a run as
 * derived (sql/run-columns.ts) list them from here.
 */
export const RUN_COLUMN_NAMES = [
  'id', 'pipeline', 'pipeline_version', 'status', 'current_stage', 'input', 'input_checksum', 'idempotency_key', 'subject_id',
  'subject_version', 'tenant', 'trace_id', 'trace_parent', 'error', 'created_at', 'updated_at', 'finished_at',
] as const satisfies readonly (keyof RunRow)[];

/** Every column of `runs`, read raw by the claim (one run per claimed job). */
export const RAW_RUN = rawRowReader<RunRow>(RUN_COLUMN_NAMES);

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
