/**
 * Stored shapes to domain records: the scripts hand records back as flat HGETALL arrays of text
 * (see lib-keys.lua), and these functions type them. Field names are the model's; an absent
 * field is null; numbers are decimal text; JSON values are JSON text.
 */
import type { FailedAttempt, Job, JobKind, JobState, JsonValue, LedgerEntry, Run, RunStatus, RollbackStatus, StageErrorRecord, StageRecord, StageStatus } from '../../core/model.ts';

/** A hash as the scripts return it: `[field, value, field, value, ...]`. */
export type FlatHash = readonly string[];

/** A hash's fields as a record. */
export type Fields = Readonly<Record<string, string | undefined>>;

/** `[f1, v1, f2, v2]` to `{f1: v1, f2: v2}`. */
export function fieldsOf(flat: FlatHash): Fields {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
  return fields;
}

/**
 * A script's list: cjson encodes an empty Lua table as `{}`, so an empty list arrives as an empty
 * object; anything else arrives as the array it is.
 */
export function listOf<T>(value: readonly T[] | Record<string, never> | null | undefined): T[] {
  return Array.isArray(value) ? [...(value as readonly T[])] : [];
}

/** Text field, null when absent. */
export function text(fields: Fields, name: string): string | null {
  return fields[name] ?? null;
}

/** Text field that must be there (a missing one is a broken record: a bug). */
export function required(fields: Fields, name: string): string {
  const value = fields[name];
  if (value === undefined) throw new Error(`redis store: record lacks field ${name}`);
  return value;
}

/** Numeric field, null when absent. */
export function numeric(fields: Fields, name: string): number | null {
  const value = fields[name];
  return value === undefined ? null : Number(value);
}

/** Numeric field that must be there. */
export function requiredNumber(fields: Fields, name: string): number {
  return Number(required(fields, name));
}

/** JSON field, null when absent. */
export function json<T = JsonValue>(fields: Fields, name: string): T | null {
  const value = fields[name];
  return value === undefined ? null : (JSON.parse(value) as T);
}

/** A value as the scripts store it: JSON text (ARGV carry JSON values this way). */
export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

export function runFrom(flat: FlatHash): Run {
  const f = fieldsOf(flat);
  return {
    id: required(f, 'id'),
    pipeline: required(f, 'pipeline'),
    pipelineVersion: requiredNumber(f, 'pipelineVersion'),
    status: required(f, 'status') as RunStatus,
    currentStage: text(f, 'currentStage'),
    input: json(f, 'input'),
    inputChecksum: required(f, 'inputChecksum'),
    idempotencyKey: text(f, 'idempotencyKey'),
    subjectId: text(f, 'subjectId'),
    subjectVersion: numeric(f, 'subjectVersion'),
    tenant: text(f, 'tenant'),
    traceId: text(f, 'traceId'),
    traceParent: text(f, 'traceParent'),
    error: json<StageErrorRecord>(f, 'error'),
    createdAt: requiredNumber(f, 'createdAt'),
    updatedAt: requiredNumber(f, 'updatedAt'),
    finishedAt: numeric(f, 'finishedAt'),
  };
}

export function stageFrom(flat: FlatHash): StageRecord {
  const f = fieldsOf(flat);
  return {
    runId: required(f, 'runId'),
    stage: required(f, 'stage'),
    index: requiredNumber(f, 'index'),
    status: required(f, 'status') as StageStatus,
    attempts: requiredNumber(f, 'attempts'),
    output: json(f, 'output'),
    error: json<StageErrorRecord>(f, 'error'),
    progress: json(f, 'progress'),
    leaseOwner: text(f, 'leaseOwner'),
    leaseUntil: numeric(f, 'leaseUntil'),
    rollbackStatus: text(f, 'rollbackStatus') as RollbackStatus | null,
    startedAt: numeric(f, 'startedAt'),
    finishedAt: numeric(f, 'finishedAt'),
    durationMs: numeric(f, 'durationMs'),
  };
}

export function jobFrom(flat: FlatHash): Job {
  const f = fieldsOf(flat);
  return {
    id: required(f, 'id'),
    runId: required(f, 'runId'),
    pipeline: required(f, 'pipeline'),
    stage: required(f, 'stage'),
    queue: required(f, 'queue'),
    kind: required(f, 'kind') as JobKind,
    state: required(f, 'state') as JobState,
    idempotencyKey: required(f, 'idempotencyKey'),
    attempt: requiredNumber(f, 'attempt'),
    maxAttempts: requiredNumber(f, 'maxAttempts'),
    priority: requiredNumber(f, 'priority'),
    availableAt: requiredNumber(f, 'availableAt'),
    enqueuedAt: requiredNumber(f, 'enqueuedAt'),
    tenant: text(f, 'tenant'),
    traceId: text(f, 'traceId'),
    leaseOwner: text(f, 'leaseOwner'),
    leaseToken: text(f, 'leaseToken'),
    fence: numeric(f, 'fence'),
    leaseUntil: numeric(f, 'leaseUntil'),
    leaseMs: numeric(f, 'leaseMs'),
    redeliveries: requiredNumber(f, 'redeliveries'),
    lastError: json<StageErrorRecord>(f, 'lastError'),
    lockWaitSince: numeric(f, 'lockWaitSince'),
  };
}

export function ledgerEntryFrom(flat: FlatHash): LedgerEntry {
  const f = fieldsOf(flat);
  return {
    key: required(f, 'key'),
    runId: required(f, 'runId'),
    stage: required(f, 'stage'),
    kind: required(f, 'kind') as JobKind,
    output: json(f, 'output'),
    completedAt: requiredNumber(f, 'completedAt'),
  };
}

/** A failed attempt as stored: JSON text of the record (written by the client-built fields). */
export function failedAttemptFrom(text: string): FailedAttempt {
  return JSON.parse(text) as FailedAttempt;
}
