/**
 * The records the memory state holds, and how they come in and go out: each is made here from
 * the request that creates it, and every value crosses the store's edge as a deep copy
 * ({@link copy}), so the state never shares an object with a caller in either direction.
 */
import type { Job, JsonValue, LedgerEntry, Run, StageRecord } from '../../core/model.ts';
import { JobState, StageStatus } from '../../core/model.ts';
import type { CacheAcquireRequest, CacheEntry } from '../../core/ports/cache.ts';
import { CacheEntryStatus } from '../../core/ports/cache.ts';
import type { JobSpec } from '../../core/ports/jobs.ts';
import type { Publication, PublicationRequest } from '../../core/ports/publications.ts';
import type { RequestRecord } from '../../core/ports/requests.ts';

/**
 * A deep copy of a value going into or out of the state: results are copied once per call (see
 * `context.ts`), values a caller hands in are copied before they are kept. What crosses is plain
 * records and JSON, copied by walking them: `structuredClone` was the job path's largest cost,
 * mostly fixed cost per call. Anything else (a Date, a Map, a cycle, a value too deep to walk)
 * goes to `structuredClone`, which also refuses, as before, what it cannot copy (functions).
 */
export function copy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return copyPlain(value) as T;
  try {
    return copyPlain(value) as T;
  } catch (err) {
    if (err instanceof RangeError) return structuredClone(value);
    throw err;
  }
}

/** {@link copy} of plain objects, arrays and primitives; any other value is structuredClone's. */
function copyPlain(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'function' || typeof value === 'symbol' ? structuredClone(value) : value;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) return (value as unknown[]).map(copyPlain);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  // Spread copies a record's own fields at once (an own `__proto__` key stays a key); then the
  // fields that are not primitives are copied in turn. for-in over the fresh copy takes V8's fast
  // path (Object.keys cost five times as much); it also lists inherited keys, which are skipped.
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key in out) {
    const field = out[key];
    if (field === null || (typeof field !== 'object' && typeof field !== 'function' && typeof field !== 'symbol')) continue;
    if (!Object.hasOwn(out, key)) continue;
    const copied = copyPlain(field);
    if (key === '__proto__') Object.defineProperty(out, key, { value: copied, enumerable: true, writable: true, configurable: true });
    else out[key] = copied;
  }
  return out;
}

/** Map key of a pair of names; NUL cannot clash with names on either side. */
export function pairKey(first: string, second: string): string {
  return `${first}\0${second}`;
}

/** One `pending` stage record per stage, in pipeline order. */
export function pendingStages(runId: string, stages: readonly string[]): StageRecord[] {
  return stages.map((stage, index) => ({
    runId,
    stage,
    index,
    status: StageStatus.pending,
    attempts: 0,
    output: null,
    error: null,
    progress: null,
    leaseOwner: null,
    leaseUntil: null,
    rollbackStatus: null,
    startedAt: null,
    finishedAt: null,
    durationMs: null,
  }));
}

/** A new `ready` job of `run` for `spec`, never attempted, enqueued at `now`. */
export function newJob(id: string, run: Run, spec: JobSpec, idempotencyKey: string, now: number, availableAt: number): Job {
  return {
    id,
    runId: run.id,
    pipeline: run.pipeline,
    stage: spec.stage,
    queue: spec.queue,
    kind: spec.kind,
    state: JobState.ready,
    idempotencyKey,
    attempt: 0,
    maxAttempts: spec.maxAttempts,
    priority: spec.priority,
    availableAt,
    enqueuedAt: now,
    tenant: run.tenant,
    traceId: run.traceId,
    leaseOwner: null,
    leaseToken: null,
    fence: null,
    leaseUntil: null,
    leaseMs: null,
    redeliveries: 0,
    lastError: null,
    lockWaitSince: null,
  };
}

/** The ledger entry of a job's first completion; `output` is kept as given (the caller's copy). */
export function ledgerEntry(job: Job, output: JsonValue, now: number): LedgerEntry {
  return {
    key: job.idempotencyKey,
    runId: job.runId,
    stage: job.stage,
    kind: job.kind,
    output,
    completedAt: now,
  };
}

/** A new `building` cache entry for `request`, with no builder yet (the caller takes the lease). */
export function newCacheEntry(request: CacheAcquireRequest, now: number): CacheEntry {
  return {
    cache: request.cache,
    key: request.key,
    status: CacheEntryStatus.Building,
    value: null,
    error: null,
    builderOwner: null,
    builderToken: null,
    builderFence: null,
    builderUntil: null,
    expiresAt: null,
    staleUntil: null,
    updatedAt: now,
  };
}

/** The publication `request` sets, fenced by the committing job's lease `fence`. */
export function publicationOf(request: PublicationRequest, fence: number, now: number): Publication {
  return {
    subjectId: request.subjectId,
    profile: request.profile,
    artifactRef: request.artifactRef,
    subjectVersion: request.subjectVersion,
    fence,
    updatedAt: now,
  };
}

/** The remembered request `record`, stamped with the state's clock. */
export function newRequestRecord(record: Omit<RequestRecord, 'createdAt'>, now: number): RequestRecord {
  return {
    scope: record.scope,
    key: record.key,
    requestHash: record.requestHash,
    value: copy(record.value),
    createdAt: now,
  };
}
