/**
 * Row shapes as `pg` returns them through kiln's type parsers (snake_case columns, `json`
 * columns already parsed, `bigint` as number) — and as `row_to_json` returns them, which is the
 * same shape — and their mapping to the domain records of `core/model.ts`. Nothing else in the
 * backend reads column names off a row.
 */
import type {
  Job,
  JobKind,
  JobState,
  JsonValue,
  LedgerEntry,
  QueueStats,
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
  input: JsonValue;
  input_checksum: string;
  idempotency_key: string | null;
  subject_id: string | null;
  subject_version: number | null;
  tenant: string | null;
  trace_id: string | null;
  error: StageErrorRecord | null;
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
  output: JsonValue | null;
  error: StageErrorRecord | null;
  progress: JsonValue | null;
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
  last_error: StageErrorRecord | null;
}

/** A `ledger` row. */
export interface LedgerRow {
  run_id: string;
  key: string;
  seq: number;
  stage: string;
  kind: JobKind;
  output: JsonValue;
  completed_at: number;
}

/** A row of the queue-stats query: counts per queue, its pause flag and the oldest ready age. */
export interface QueueStatsRow {
  queue: string;
  paused: boolean;
  ready: number;
  scheduled: number;
  leased: number;
  parked: number;
  dead: number;
  oldest_ready_age_ms: number | null;
}

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

/** Row -> {@link Run}. */
export function runFromRow(row: RunRow): Run {
  return {
    id: row.id,
    pipeline: row.pipeline,
    pipelineVersion: row.pipeline_version,
    status: row.status,
    currentStage: row.current_stage,
    input: row.input,
    inputChecksum: row.input_checksum,
    idempotencyKey: row.idempotency_key,
    subjectId: row.subject_id,
    subjectVersion: row.subject_version,
    tenant: row.tenant,
    traceId: row.trace_id,
    error: row.error,
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
    output: row.output,
    error: row.error,
    progress: row.progress,
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
    lastError: row.last_error,
  };
}

/** Row -> {@link LedgerEntry}. */
export function ledgerFromRow(row: LedgerRow): LedgerEntry {
  return {
    key: row.key,
    runId: row.run_id,
    stage: row.stage,
    kind: row.kind,
    output: row.output,
    completedAt: row.completed_at,
  };
}

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
