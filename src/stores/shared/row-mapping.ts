/**
 * The table rows every SQL store shares (snake_case columns, epoch-ms integers) and their
 * mapping to the domain records of `core/model.ts` and `core/ports/`. Drivers differ only in how a JSON column
 * arrives — SQLite hands back TEXT, `pg` an already-parsed value — so the row types take that
 * encoding as a type parameter and {@link createRowMapping} takes the decoders; each store
 * keeps its own decoding and this module keeps the one field-by-field mapping.
 *
 * Pure TypeScript with no driver import: stores import it, it imports only `core`.
 */
import type {
  FailedAttempt,
  FailureAction,
  Job,
  JobKind,
  JobState,
  JsonValue,
  LedgerEntry,
  RollbackStatus,
  Run,
  RunStatus,
  StageErrorRecord,
  StageRecord,
  StageStatus,
} from '../../core/model.ts';
import type { CacheEntry, CacheEntryStatus } from '../../core/ports/cache.ts';
import type { Lock } from '../../core/ports/locks.ts';
import type { Publication } from '../../core/ports/publications.ts';
import type { RequestRecord } from '../../core/ports/requests.ts';

/**
 * A `runs` row. `Json` is how the driver returns a JSON column, `ErrorJson` an error column
 * (the same as `Json` unless the driver types it more precisely).
 */
export interface RunRowOf<Json, ErrorJson = Json> {
  id: string;
  pipeline: string;
  pipeline_version: number;
  status: RunStatus;
  current_stage: string | null;
  input: Json;
  input_checksum: string;
  idempotency_key: string | null;
  subject_id: string | null;
  subject_version: number | null;
  tenant: string | null;
  trace_id: string | null;
  trace_parent: string | null;
  error: ErrorJson | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

/** A `stage_records` row; type parameters as in {@link RunRowOf}. */
export interface StageRowOf<Json, ErrorJson = Json> {
  run_id: string;
  stage: string;
  stage_index: number;
  status: StageStatus;
  attempts: number;
  output: Json | null;
  error: ErrorJson | null;
  progress: Json | null;
  lease_owner: string | null;
  lease_until: number | null;
  rollback_status: RollbackStatus | null;
  started_at: number | null;
  finished_at: number | null;
  duration_ms: number | null;
}

/** A `jobs` row (the columns every store has); `ErrorJson` as in {@link RunRowOf}. */
export interface JobRowOf<ErrorJson> {
  id: string;
  run_id: string;
  pipeline: string;
  stage: string;
  queue: string;
  kind: JobKind;
  state: JobState;
  idempotency_key: string;
  attempt: number;
  max_attempts: number;
  priority: number;
  available_at: number;
  enqueued_at: number;
  tenant: string | null;
  trace_id: string | null;
  lease_owner: string | null;
  lease_token: string | null;
  fence: number | null;
  lease_until: number | null;
  lease_ms: number | null;
  redeliveries: number;
  last_error: ErrorJson | null;
  lock_wait_since: number | null;
  /** The job's first claim (migration 0015 / 0020): its stage's start while the record has none. */
  started_at: number | null;
}

/** A `ledger` row; `Json` as in {@link RunRowOf}. */
export interface LedgerRowOf<Json> {
  run_id: string;
  key: string;
  /** Position among the run's entries, in completion order. */
  seq: number;
  stage: string;
  kind: JobKind;
  output: Json;
  completed_at: number;
}

/** A `failed_attempts` row; `ErrorJson` as in {@link RunRowOf}. */
export interface FailedAttemptRowOf<ErrorJson> {
  run_id: string;
  /** Position among the run's failures, in commit order. */
  seq: number;
  job_id: string;
  stage: string;
  kind: JobKind;
  queue: string;
  attempt: number;
  worker: string | null;
  action: FailureAction;
  error: ErrorJson;
  duration_ms: number;
  failed_at: number;
}

/** A `cache_entries` row (its stored columns); `Json` as in {@link RunRowOf}. */
export interface CacheEntryRowOf<Json> {
  cache: string;
  key: string;
  status: CacheEntryStatus;
  value: Json | null;
  error: Json | null;
  builder_owner: string | null;
  builder_token: string | null;
  builder_fence: number | null;
  builder_until: number | null;
  expires_at: number | null;
  stale_until: number | null;
  updated_at: number;
}

/** A `publications` row (no JSON columns, so the same for every driver). */
export interface PublicationRow {
  subject_id: string;
  profile: string;
  artifact_ref: string;
  subject_version: number;
  fence: number;
  updated_at: number;
}

/** A `locks` row as read for callers (no token, no JSON columns, so the same for every driver). */
export interface LockRow {
  key: string;
  owner: string;
  fence: number;
  acquired_at: number;
  expires_at: number;
}

/** A `request_records` row; `Json` as in {@link RunRowOf}. */
export interface RequestRecordRowOf<Json> {
  scope: string;
  key: string;
  request_hash: string;
  value: Json;
  created_at: number;
}

/**
 * How a driver's JSON columns become domain values. Called only on non-NULL column values: SQL
 * NULL always maps to `null` without reaching a decoder.
 */
export interface JsonColumnDecoders<Json, ErrorJson> {
  json(value: Json): JsonValue;
  error(value: ErrorJson): StageErrorRecord;
}

/** Row -> domain record functions for one driver's encoding (see {@link createRowMapping}). */
export interface RowMapping<Json, ErrorJson> {
  /** Row -> {@link Run}. */
  runFromRow(row: RunRowOf<Json, ErrorJson>): Run;
  /** Row -> {@link StageRecord}. */
  stageFromRow(row: StageRowOf<Json, ErrorJson>): StageRecord;
  /** Row -> {@link Job}; columns beyond {@link JobRowOf} (a store's own) are not copied. */
  jobFromRow(row: JobRowOf<ErrorJson>): Job;
  /** Row -> {@link LedgerEntry}. */
  ledgerFromRow(row: LedgerRowOf<Json>): LedgerEntry;
  /** Row -> {@link FailedAttempt}. */
  failedAttemptFromRow(row: FailedAttemptRowOf<ErrorJson>): FailedAttempt;
  /** Row -> {@link CacheEntry}. */
  cacheEntryFromRow(row: CacheEntryRowOf<Json>): CacheEntry;
  /** Row -> {@link Publication} (no JSON to decode; here so every row has one home). */
  publicationFromRow(row: PublicationRow): Publication;
  /** Row -> {@link RequestRecord}. */
  requestRecordFromRow(row: RequestRecordRowOf<Json>): RequestRecord;
  /** Row -> {@link Lock} (no JSON to decode). */
  lockFromRow(row: LockRow): Lock;
}

/**
 * Builds the row mapping for a driver whose JSON columns decode with `decode`. Every record is
 * built as a fresh literal naming each field, so extra columns on a row never leak into the
 * domain record (and the object has one stable shape, which keeps the hot claim path fast).
 */
export function createRowMapping<Json, ErrorJson>(decode: JsonColumnDecoders<Json, ErrorJson>): RowMapping<Json, ErrorJson> {
  const columns: ColumnDecoders<Json, ErrorJson> = {
    json: (value) => decode.json(value),
    jsonOrNull: (value) => (value === null ? null : decode.json(value)),
    errorOrNull: (value) => (value === null ? null : decode.error(value)),
  };
  return {
    runFromRow: (row) => runFromRow(row, columns),
    stageFromRow: (row) => stageFromRow(row, columns),
    jobFromRow: (row) => jobFromRow(row, columns),
    ledgerFromRow: (row) => ledgerFromRow(row, columns),
    failedAttemptFromRow: (row) => failedAttemptFromRow(row, decode),
    cacheEntryFromRow: (row) => cacheEntryFromRow(row, columns),
    publicationFromRow,
    requestRecordFromRow: (row) => requestRecordFromRow(row, columns),
    lockFromRow,
  };
}

/** {@link JsonColumnDecoders} with SQL NULL handled once, for the mapping functions below. */
interface ColumnDecoders<Json, ErrorJson> {
  json(value: Json): JsonValue;
  jsonOrNull(value: Json | null): JsonValue | null;
  errorOrNull(value: ErrorJson | null): StageErrorRecord | null;
}

function runFromRow<Json, ErrorJson>(row: RunRowOf<Json, ErrorJson>, d: ColumnDecoders<Json, ErrorJson>): Run {
  return {
    id: row.id,
    pipeline: row.pipeline,
    pipelineVersion: row.pipeline_version,
    status: row.status,
    currentStage: row.current_stage,
    input: d.json(row.input),
    inputChecksum: row.input_checksum,
    idempotencyKey: row.idempotency_key,
    subjectId: row.subject_id,
    subjectVersion: row.subject_version,
    tenant: row.tenant,
    traceId: row.trace_id,
    traceParent: row.trace_parent,
    error: d.errorOrNull(row.error),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}

function stageFromRow<Json, ErrorJson>(row: StageRowOf<Json, ErrorJson>, d: ColumnDecoders<Json, ErrorJson>): StageRecord {
  return {
    runId: row.run_id,
    stage: row.stage,
    index: row.stage_index,
    status: row.status,
    attempts: row.attempts,
    output: d.jsonOrNull(row.output),
    error: d.errorOrNull(row.error),
    progress: d.jsonOrNull(row.progress),
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
    rollbackStatus: row.rollback_status,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
  };
}

function jobFromRow<Json, ErrorJson>(row: JobRowOf<ErrorJson>, d: ColumnDecoders<Json, ErrorJson>): Job {
  return {
    id: row.id,
    runId: row.run_id,
    pipeline: row.pipeline,
    stage: row.stage,
    queue: row.queue,
    kind: row.kind,
    state: row.state,
    idempotencyKey: row.idempotency_key,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    priority: row.priority,
    availableAt: row.available_at,
    enqueuedAt: row.enqueued_at,
    tenant: row.tenant,
    traceId: row.trace_id,
    leaseOwner: row.lease_owner,
    leaseToken: row.lease_token,
    fence: row.fence,
    leaseUntil: row.lease_until,
    leaseMs: row.lease_ms,
    redeliveries: row.redeliveries,
    lastError: d.errorOrNull(row.last_error),
    lockWaitSince: row.lock_wait_since,
  };
}

function ledgerFromRow<Json, ErrorJson>(row: LedgerRowOf<Json>, d: ColumnDecoders<Json, ErrorJson>): LedgerEntry {
  return {
    key: row.key,
    runId: row.run_id,
    stage: row.stage,
    kind: row.kind,
    output: d.json(row.output),
    completedAt: row.completed_at,
  };
}

function failedAttemptFromRow<Json, ErrorJson>(row: FailedAttemptRowOf<ErrorJson>, d: JsonColumnDecoders<Json, ErrorJson>): FailedAttempt {
  return {
    runId: row.run_id,
    jobId: row.job_id,
    stage: row.stage,
    kind: row.kind,
    queue: row.queue,
    attempt: row.attempt,
    workerId: row.worker,
    error: d.error(row.error),
    action: row.action,
    durationMs: row.duration_ms,
    failedAt: row.failed_at,
  };
}

function cacheEntryFromRow<Json, ErrorJson>(row: CacheEntryRowOf<Json>, d: ColumnDecoders<Json, ErrorJson>): CacheEntry {
  return {
    cache: row.cache,
    key: row.key,
    status: row.status,
    value: d.jsonOrNull(row.value),
    // A cache entry's error is plain JSON (`{ code, message, class }`), not a StageErrorRecord column.
    error: d.jsonOrNull(row.error),
    builderOwner: row.builder_owner,
    builderToken: row.builder_token,
    builderFence: row.builder_fence,
    builderUntil: row.builder_until,
    expiresAt: row.expires_at,
    staleUntil: row.stale_until,
    updatedAt: row.updated_at,
  };
}

function publicationFromRow(row: PublicationRow): Publication {
  return {
    subjectId: row.subject_id,
    profile: row.profile,
    artifactRef: row.artifact_ref,
    subjectVersion: row.subject_version,
    fence: row.fence,
    updatedAt: row.updated_at,
  };
}

function lockFromRow(row: LockRow): Lock {
  return { key: row.key, owner: row.owner, fence: row.fence, acquiredAt: row.acquired_at, expiresAt: row.expires_at };
}

function requestRecordFromRow<Json, ErrorJson>(row: RequestRecordRowOf<Json>, d: ColumnDecoders<Json, ErrorJson>): RequestRecord {
  return { scope: row.scope, key: row.key, requestHash: row.request_hash, value: d.json(row.value), createdAt: row.created_at };
}
