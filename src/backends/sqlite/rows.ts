/**
 * Row shapes as better-sqlite3 returns them (snake_case columns, JSON as TEXT, booleans as 0/1)
 * and their mapping to the domain records of `core/model.ts`. Nothing else in the backend reads
 * column names off a row.
 */
import type {
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

/** A `runs` row. */
export interface RunRow {
  id: string;
  pipeline: string;
  pipeline_version: number;
  status: RunStatus;
  current_stage: string | null;
  input: string;
  input_checksum: string;
  idempotency_key: string | null;
  subject_id: string | null;
  subject_version: number | null;
  tenant: string | null;
  trace_id: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

/** A `stage_records` row. */
export interface StageRow {
  run_id: string;
  stage: string;
  stage_index: number;
  status: StageStatus;
  attempts: number;
  output: string | null;
  error: string | null;
  progress: string | null;
  lease_owner: string | null;
  lease_until: number | null;
  rollback_status: RollbackStatus | null;
  started_at: number | null;
  finished_at: number | null;
  duration_ms: number | null;
}

/** A `jobs` row. */
export interface JobRow {
  id: string;
  run_id: string;
  pipeline: string;
  stage: string;
  queue: string;
  kind: JobKind;
  state: JobState;
  idempotency_key: string;
  /** '' while the job is live, its own id once dead (see migration 0001). */
  dead_slot: string;
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
  last_error: string | null;
}

/**
 * The columns of `jobs` in the order {@link jobRowFromValues} reads them, for hot statements read
 * raw (arrays): better-sqlite3 builds a row object several times slower than a literal does.
 */
export const JOB_COLUMNS =
  'id, run_id, pipeline, stage, queue, kind, state, idempotency_key, dead_slot, attempt, max_attempts, priority, ' +
  'available_at, enqueued_at, tenant, trace_id, lease_owner, lease_token, fence, lease_until, lease_ms, redeliveries, last_error';

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
  };
}

/** A `ledger` row. */
export interface LedgerRow {
  run_id: string;
  key: string;
  /** Position among the run's entries, in completion order. */
  seq: number;
  stage: string;
  kind: JobKind;
  output: string;
  completed_at: number;
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

function jsonOrNull(text: string | null): JsonValue | null {
  return text === null ? null : fromJson(text);
}

function errorOrNull(text: string | null): StageErrorRecord | null {
  return text === null ? null : (JSON.parse(text) as StageErrorRecord);
}

/** Row -> {@link Run}. */
export function runFromRow(row: RunRow): Run {
  return {
    id: row.id,
    pipeline: row.pipeline,
    pipelineVersion: row.pipeline_version,
    status: row.status,
    currentStage: row.current_stage,
    input: fromJson(row.input),
    inputChecksum: row.input_checksum,
    idempotencyKey: row.idempotency_key,
    subjectId: row.subject_id,
    subjectVersion: row.subject_version,
    tenant: row.tenant,
    traceId: row.trace_id,
    error: errorOrNull(row.error),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}

/** Row -> {@link StageRecord}. */
export function stageFromRow(row: StageRow): StageRecord {
  return {
    runId: row.run_id,
    stage: row.stage,
    index: row.stage_index,
    status: row.status,
    attempts: row.attempts,
    output: jsonOrNull(row.output),
    error: errorOrNull(row.error),
    progress: jsonOrNull(row.progress),
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
    rollbackStatus: row.rollback_status,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
  };
}

/** Row -> {@link Job}. */
export function jobFromRow(row: JobRow): Job {
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
    lastError: errorOrNull(row.last_error),
  };
}

/** Row -> {@link LedgerEntry}. */
export function ledgerFromRow(row: LedgerRow): LedgerEntry {
  return {
    key: row.key,
    runId: row.run_id,
    stage: row.stage,
    kind: row.kind,
    output: fromJson(row.output),
    completedAt: row.completed_at,
  };
}
