/**
 * The in-memory state behind the reference store: plain maps, mutated only by synchronous
 * operations, so every port method body is one atomic unit without any locking. The moves the
 * sub-ports share (enqueue with key collapse, ending a run, lease checks) live here once.
 */
import type { Clock } from '../../core/clock.ts';
import { NotFoundError } from '../../core/errors.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { jobIdempotencyKey } from '../../core/keys.ts';
import type { FailedAttempt, Job, JsonValue, LedgerEntry, Run, RunStatus, StageErrorRecord, StageRecord } from '../../core/model.ts';
import { JobState, StageStatus } from '../../core/model.ts';
import type { CacheEntry } from '../../core/ports/cache.ts';
import type { JobSpec, LeaseRef } from '../../core/ports/jobs.ts';
import type { Lock } from '../../core/ports/locks.ts';
import type { Publication } from '../../core/ports/publications.ts';
import type { RequestRecord } from '../../core/ports/requests.ts';
import type { ApiToken } from '../../core/ports/tokens.ts';
import { createWakeListeners } from '../shared/wake-listeners.ts';
import { JobIndex } from './job-index.ts';
import { newJob, pairKey } from './rows.ts';

/**
 * Deletes the entries of `map` whose value `doomed` picks; returns how many. Deleting the entry
 * being visited is safe for a Map: iteration goes on with the next one.
 */
export function deleteWhere<K, V>(map: Map<K, V>, doomed: (value: V) => boolean): number {
  let deleted = 0;
  for (const [key, value] of map) {
    if (!doomed(value)) continue;
    map.delete(key);
    deleted += 1;
  }
  return deleted;
}

/** `<pipeline>\0<subjectId>` of a run with a versioned subject, or null. */
export function subjectKey(run: Run): string | null {
  return run.subjectId === null || run.subjectVersion === null ? null : pairKey(run.pipeline, run.subjectId);
}

/** A lock as the state keeps it: with its owner's token. */
export interface StoredLock extends Lock {
  token: string;
}

/** A blob as the state keeps it (the `blobs` sub-port). */
export interface StoredMemoryBlob {
  bytes: Uint8Array;
  mediaType: string;
  /** Last put, store clock. */
  modifiedAt: number;
}

/** Outcome of checking a presented lease against the state. */
export type LeaseCheck =
  | { ok: true; job: Job; run: Run }
  | { ok: false; reason: 'lost' | 'cancelled' };

/** Everything the memory store holds; one instance per store. */
export class MemoryState {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  schemaVersion = 0;
  /** One fence counter for the whole state: every job claim, cache builder and lock takes the next value. */
  fence = 0;
  /** Run id -> run. Runs are added and deleted only through {@link addRun} and {@link deleteRun}. */
  readonly runs = new Map<string, Run>();
  /** `<pipeline>\0<subjectId>` -> the runs of that subject with a version, in creation order (supersession reads them). */
  private readonly subjectRuns = new Map<string, Run[]>();
  /** `<pipeline>\0<idempotencyKey>` -> run id: submissions dedupe per pipeline. */
  readonly runKeys = new Map<string, string>();
  /** Run id -> its stage records in pipeline order. */
  readonly stages = new Map<string, StageRecord[]>();
  /** Job id -> job. Jobs are created, deleted and refiled only through the state (see {@link jobIndex}). */
  readonly jobs = new Map<string, Job>();
  /** The indexes over `jobs` that the job path reads instead of scanning. */
  readonly jobIndex = new JobIndex();
  /**
   * Every job ever created -> its run, kept after the job is deleted, so a holder of a deleted
   * job can be told `cancelled` (run cancelled/superseded) rather than `lost`.
   */
  readonly jobRunIds = new Map<string, string>();
  /** Idempotency key -> entry; Map insertion order is completion order. */
  readonly ledger = new Map<string, LedgerEntry>();
  /** Run id -> its failed attempts, in commit order (written on the failure path only). */
  readonly failedAttempts = new Map<string, FailedAttempt[]>();
  /** `<minute start>\0<queue>` -> recorded activity of that queue in that minute (`stats.recordActivity`). */
  readonly queueActivity = new Map<string, { minuteAt: number; queue: string; completed: number; failed: number }>();
  /** `<cache>\0<key>` -> single-flight cache entry. */
  readonly cacheEntries = new Map<string, CacheEntry>();
  /** `<subjectId>\0<profile>` -> publication. */
  readonly publications = new Map<string, Publication>();
  /** `<scope>\0<key>` -> remembered client request. */
  readonly requestRecords = new Map<string, RequestRecord>();
  /** Lock key -> the lock (live, or expired and not reaped yet). */
  readonly locks = new Map<string, StoredLock>();
  /** `<scope>\0<key>` -> the last value `versions.allocate` handed out. */
  readonly versionCounters = new Map<string, number>();
  /** Token id -> the token with the hash of its secret; never deleted. */
  readonly apiTokens = new Map<string, ApiToken & { secretHash: string }>();
  /** Secret hash -> token id (the SQL stores' unique index): a token is found by its hash, never by comparing hashes. */
  readonly apiTokenIds = new Map<string, string>();
  /** Ref -> small content-addressed object (`blobs` sub-port). */
  readonly blobs = new Map<string, StoredMemoryBlob>();
  /** Queues ever paused or resumed by an operator, with their current flag. */
  readonly queuePaused = new Map<string, boolean>();
  /** Queues to wake once the current operation has finished. */
  readonly pendingWakes = new Set<string>();
  /** The `onWake` listeners; {@link flushWakes} hands them the pending queues. */
  readonly wakeListeners = createWakeListeners();

  constructor(clock: Clock, ids: IdGenerator) {
    this.clock = clock;
    this.ids = ids;
  }

  /** Takes the next fence: greater than every fence issued before by this state. */
  nextFence(): number {
    this.fence += 1;
    return this.fence;
  }

  /** Adds a run just created. */
  addRun(run: Run): void {
    this.runs.set(run.id, run);
    const key = subjectKey(run);
    if (key === null) return;
    const runs = this.subjectRuns.get(key);
    if (runs) runs.push(run);
    else this.subjectRuns.set(key, [run]);
  }

  /** Deletes a run (the caller deletes what it owns). */
  deleteRun(run: Run): void {
    this.runs.delete(run.id);
    const key = subjectKey(run);
    const runs = key === null ? undefined : this.subjectRuns.get(key);
    if (key === null || !runs) return;
    const rest = runs.filter((r) => r !== run);
    if (rest.length > 0) this.subjectRuns.set(key, rest);
    else this.subjectRuns.delete(key);
  }

  /** The runs of the same pipeline and versioned subject as `run` (itself included), in creation order. */
  subjectRunsOf(run: Run): readonly Run[] {
    const key = subjectKey(run);
    return key === null ? [] : (this.subjectRuns.get(key) ?? []);
  }

  /** The run, or `NotFoundError`. */
  requireRun(runId: string): Run {
    const run = this.runs.get(runId);
    if (!run) throw new NotFoundError('run', runId);
    return run;
  }

  /** The stage record of `stage` in `runId`; a missing one is a programming error upstream. */
  stageRecord(runId: string, stage: string): StageRecord {
    const record = this.stages.get(runId)?.find((s) => s.stage === stage);
    if (!record) throw new NotFoundError('stage', `${runId}/${stage}`);
    return record;
  }

  /** Jobs of one run, in creation order. */
  jobsOfRun(runId: string): Job[] {
    return this.jobIndex.jobsOfRun(runId);
  }

  /**
   * Enqueues a job for `run`, ready at `availableAt`. A live (non-dead) job with the same
   * idempotency key already present absorbs the enqueue: at most one live job per key.
   */
  enqueue(run: Run, spec: JobSpec, now: number, availableAt = now): Job {
    const key = jobIdempotencyKey(run.id, spec.stage, spec.kind);
    const live = this.jobIndex.liveJob(key);
    if (live) return live;
    const job = newJob(this.ids.next('job'), run, spec, key, now, availableAt);
    this.jobs.set(job.id, job);
    this.jobIndex.add(job);
    this.jobRunIds.set(job.id, run.id);
    if (availableAt <= now) this.pendingWakes.add(job.queue);
    return job;
  }

  /** Deletes a job (its id stays known in `jobRunIds`). */
  deleteJob(jobId: string): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    this.jobs.delete(jobId);
    this.jobIndex.remove(job);
  }

  /** Refiles a job in {@link jobIndex}; every change of a job's `state`, `availableAt` or `attempt` is followed by this. */
  jobChanged(job: Job): void {
    this.jobIndex.refile(job);
  }

  /**
   * Ends a run that will never move again by itself: deletes its jobs (so no holder can commit)
   * and marks the stages that had not succeeded `skipped`.
   */
  endRun(run: Run, status: RunStatus, error: StageErrorRecord | null, now: number): void {
    for (const job of this.jobsOfRun(run.id)) this.deleteJob(job.id);
    for (const record of this.stages.get(run.id) ?? []) {
      if (record.status === StageStatus.succeeded) continue;
      record.status = StageStatus.skipped;
      record.leaseOwner = null;
      record.leaseUntil = null;
    }
    run.status = status;
    run.error = error;
    run.currentStage = null;
    run.finishedAt = now;
    run.updatedAt = now;
  }

  /**
   * Checks a presented lease: the job exists, is leased, carries this token and has not
   * expired. A job that is gone because its run was cancelled or superseded reads `cancelled`.
   */
  checkLease(lease: LeaseRef, now: number): LeaseCheck {
    const job = this.jobs.get(lease.jobId);
    if (!job) {
      const runId = this.jobRunIds.get(lease.jobId);
      const status = runId === undefined ? undefined : this.runs.get(runId)?.status;
      return { ok: false, reason: status === 'cancelled' || status === 'superseded' ? 'cancelled' : 'lost' };
    }
    if (job.state !== JobState.leased || job.leaseToken !== lease.token || (job.leaseUntil ?? 0) <= now) {
      return { ok: false, reason: 'lost' };
    }
    return { ok: true, job, run: this.requireRun(job.runId) };
  }

  /** Clears a job's lease fields (back to ready, parked or dead). */
  clearLease(job: Job): void {
    job.leaseOwner = null;
    job.leaseToken = null;
    job.fence = null;
    job.leaseUntil = null;
    job.leaseMs = null;
  }

  /** Outputs of the run's succeeded stages, by stage name. */
  outputsOf(runId: string): Record<string, JsonValue> {
    const outputs: Record<string, JsonValue> = {};
    for (const record of this.stages.get(runId) ?? []) {
      if (record.status === StageStatus.succeeded) outputs[record.stage] = record.output;
    }
    return outputs;
  }

  /** True once any compensation was enqueued for the run: it can no longer be replayed. */
  isCompensating(runId: string): boolean {
    return (this.stages.get(runId) ?? []).some((s) => s.rollbackStatus !== null);
  }

  /** Fires wake hints for the queues collected by the operation that just finished (deferred, see `wakeListeners`). */
  flushWakes(): void {
    this.wakeListeners.fire(this.pendingWakes);
    this.pendingWakes.clear();
  }
}
