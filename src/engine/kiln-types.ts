/**
 * The engine's public surface: what the HTTP service, the CLI and library users call.
 */
import type { Clock } from '../core/clock.ts';
import type { IdGenerator } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { FailedAttempt, Job, JsonValue, LedgerEntry, QueueStats, Run, RunStatus } from '../core/model.ts';
import type { EngineObserver } from '../core/observer.ts';
import type { PipelineDefinition } from '../core/pipeline/define-pipeline.ts';
import type { StagePolicy, StagePolicyOverrides } from '../core/policy/stage-policy.ts';
import type { SingleFlightCache } from '../core/cache.ts';
import type { ArtifactGcOptions, ArtifactGcReport } from './artifact-gc.ts';
import type { AdmissionLimits } from './admission.ts';
import type { VerifyOptions, VerifyReport } from './verify/verify-types.ts';
import type { RunEndedEvent } from './worker-deps.ts';
import type { ArtifactStore } from '../core/ports/artifact-store.ts';
import type { SubmitRunResult } from '../core/ports/jobs.ts';
import type { Lock, LockStats } from '../core/ports/locks.ts';
import type { Publication } from '../core/ports/publications.ts';
import type { ListDeadLettersQuery, ListRunsQuery, RunDetail } from '../core/ports/reads.ts';
import type { RequestRecord } from '../core/ports/requests.ts';
import type { DeadLetterGroup, QueueActivityQuery, QueueActivityReport } from '../core/ports/stats.ts';
import type { CacheEntry, ListCacheEntriesQuery } from '../core/ports/cache.ts';
import type { Store } from '../core/ports/store.ts';
import type { RetentionSettings } from './retention.ts';

/** Policy overrides from `kiln.yaml`: pipeline name -> stage name -> fields. */
export type PolicyOverrides = Readonly<Record<string, Readonly<Record<string, StagePolicyOverrides>>>>;

/** Everything the engine needs; only `store`, `artifacts` and `pipelines` are required. */
export interface KilnOptions {
  store: Store;
  artifacts: ArtifactStore;
  pipelines: readonly PipelineDefinition[];
  /** Per pipeline and stage, applied over the definitions' own policies. */
  policies?: PolicyOverrides;
  /** TTL of stage locks whose policy sets none (`worker.lock.ttl` in kiln.yaml). @default 30 s */
  lockTtlMs?: number;
  /**
   * Raw settings per pipeline name (`pipelines.<name>.settings` of kiln.yaml), parsed by each
   * pipeline's `parseSettings` here (so parsing must accept its own output). @default {}
   */
  settings?: Readonly<Record<string, unknown>>;
  /**
   * Admission limits of submissions (`admission:` in kiln.yaml; see admission.ts): past one, a
   * submission is refused with an `AdmissionRefusedError` (HTTP 429) and stores nothing.
   * @default no limits (no check at all)
   */
  admission?: AdmissionLimits;
  logger?: Logger;
  observer?: EngineObserver;
  clock?: Clock;
  ids?: IdGenerator;
  /** Randomness for backoff jitter (tests pass a fixed one). */
  random?: () => number;
}

/** Options of one submission. */
export interface SubmitOptions {
  idempotencyKey?: string;
  subjectId?: string;
  subjectVersion?: number;
  tenant?: string;
  /**
   * W3C `traceparent` of the caller (an HTTP request's, say): `kiln.submit` and every attempt of
   * the run join its trace. An active span, when the process has an OpenTelemetry SDK, wins.
   * Invalid values are ignored (a new trace starts).
   */
  traceparent?: string;
  /** The trace to join when no `traceparent` is given (32 hex digits; anything else is ignored). */
  traceId?: string;
}

/** Options of a worker. */
export interface WorkerOptions {
  /** Defaults to a random id; appears as lease owner. */
  workerId?: string;
  /** Queues to serve (`<pipeline>.<stage>`); default all queues of all pipelines. */
  queues?: readonly string[];
  /** Poll interval when idle; default 250 ms. Wake hints cut it short. */
  pollMs?: number;
  /** Interval of the expired-lease reaper and orphaned-temp sweep; default 1000 ms. */
  reapMs?: number;
  /** Temp files older than this are orphans the reaper removes; default 1 h. */
  tempGraceMs?: number;
  /** The reaper removes unreferenced artifacts last written longer ago than this; default 1 h. */
  artifactGraceMs?: number;
  /**
   * Retention: the reaper prunes one batch of expired runs and request records per `intervalMs`
   * (the next batch at the next tick while batches come back full). Absent: this worker never
   * prunes.
   */
  retention?: RetentionSettings;
  /**
   * Called after a handler succeeded and before its outcome is committed. For fault-injection
   * tests (the CLI wires `KILN_CRASH_BEFORE_COMMIT=<pipeline>.<stage>` to a SIGKILL here).
   */
  beforeCommit?: (job: Job) => void;
}

/** How many of a queue's slots (its stage's `concurrency`) a worker is using. */
export interface QueueSlots {
  queue: string;
  /** Handlers running now. */
  busy: number;
  /** The stage's concurrency. */
  slots: number;
}

/** A worker: claims, runs and commits jobs until stopped. */
export interface Worker {
  readonly id: string;
  /** Starts the claim loop (idempotent). */
  start(): void;
  /**
   * Graceful stop: no new claims; in-flight jobs may finish within `graceMs` (default 10 s);
   * the rest are handed back at once (`Store.jobs.release`) and their handlers aborted.
   */
  stop(graceMs?: number): Promise<void>;
  /**
   * One pass over every queue: claims what capacity allows and waits until those jobs are
   * committed. Returns the number of jobs processed. For deterministic tests.
   */
  runOnce(): Promise<number>;
  /** Jobs currently held. */
  inFlight(): number;
  /** Per served queue: handlers running now (`busy`) out of the stage's concurrency (`slots`). */
  slots(): QueueSlots[];
}

/** The engine. */
export interface Kiln {
  readonly store: Store;
  readonly artifacts: ArtifactStore;
  readonly pipelines: ReadonlyMap<string, PipelineDefinition>;
  /** The resolved policy of a stage (definition + kiln.yaml + defaults). */
  policyOf(pipeline: string, stage: string): StagePolicy;
  /**
   * Validates the input (`UNKNOWN_PIPELINE`, `VALIDATION_FAILED`), hashes its canonical form and
   * submits a run (deduplicated by `idempotencyKey`).
   */
  submit(pipeline: string, input: unknown, options?: SubmitOptions): Promise<SubmitRunResult>;
  /**
   * Submits many runs of one pipeline in ONE store transaction (bulk enqueue). Every input is
   * validated first: one bad input (`VALIDATION_FAILED`, `details.index`) submits nothing. Results
   * are in input order.
   */
  submitMany(pipeline: string, items: readonly { input: unknown; options?: SubmitOptions }[]): Promise<SubmitRunResult[]>;
  getRun(runId: string): Promise<RunDetail>;
  /** Runs newest first (see `ListRunsQuery`: pipeline, status, subject, tenant, creation time, keyset cursor). */
  listRuns(query?: Partial<ListRunsQuery>): Promise<Run[]>;
  /** Failed attempts of a run, in the order they were committed; `NotFoundError` for an unknown run. */
  listAttempts(runId: string): Promise<FailedAttempt[]>;
  cancelRun(runId: string, reason?: string): Promise<Run>;
  resumeRun(runId: string): Promise<Run>;
  /**
   * Makes the dead job of a `dead_lettered` run ready again (see `Store.operator.replayJob`); the job of
   * a run that failed permanently (`failed`) is refused with `INVALID_TRANSITION`.
   */
  replayJob(jobId: string): Promise<Job>;
  getJob(jobId: string): Promise<Job>;
  listJobs(query?: { queue?: string; runId?: string; state?: Job['state']; tenant?: string; limit?: number }): Promise<Job[]>;
  ledger(runId: string): Promise<LedgerEntry[]>;
  /** Dead letters (dead stage jobs of `dead_lettered` runs), newest first; replay them with {@link Kiln.replayJob}. */
  listDeadLetters(query?: Partial<ListDeadLettersQuery>): Promise<Job[]>;
  /** Dead letters grouped by error code, the largest group first. */
  deadLetterGroups(): Promise<DeadLetterGroup[]>;
  /** Completions and failed attempts per queue over the last `buckets * bucketMs`, and ages of ready jobs. */
  queueActivity(query: QueueActivityQuery): Promise<QueueActivityReport>;
  /** Single-flight cache entries (e.g. `{ status: 'building' }`), by cache then key. */
  listCacheEntries(query?: Partial<ListCacheEntriesQuery>): Promise<CacheEntry[]>;
  /** Stats of every known queue, including empty queues of registered pipelines. */
  queues(): Promise<QueueStats[]>;
  /** Operator actions take a queue of a registered pipeline; any other name: `NotFoundError` `UNKNOWN_QUEUE`. */
  pauseQueue(queue: string): Promise<void>;
  resumeQueue(queue: string): Promise<void>;
  /** Removes ready jobs of the queue and cancels their runs; returns how many. */
  drainQueue(queue: string): Promise<number>;
  createWorker(options?: WorkerOptions): Worker;
  /** Removes (or with `dryRun` lists) artifacts nothing references any more; see artifact-gc.ts. */
  collectArtifacts(options: ArtifactGcOptions): Promise<ArtifactGcReport>;
  /**
   * Audits the store's invariants and lists each violation with its ids (see verify/verify-store.ts);
   * changes nothing. Graces default to 1 min (leases) and 1 h (temp files).
   */
  verify(options?: Partial<VerifyOptions>): Promise<VerifyReport>;
  /** A pipeline's parsed settings (what its stages get as `ctx.settings`); null without `parseSettings`. */
  settingsOf(pipeline: string): JsonValue;
  /** The single-flight cache (the same one stage handlers get as `ctx.cache`). */
  readonly cache: SingleFlightCache;
  /** The publication of `(subjectId, profile)`, or null. */
  getPublication(subjectId: string, profile: string): Promise<Publication | null>;
  /** Every publication of a subject, by profile. */
  listPublications(subjectId: string): Promise<Publication[]>;
  /** Removes a subject's publications (all, or only `profiles`); returns how many. */
  deletePublications(subjectId: string, profiles?: readonly string[]): Promise<number>;
  /** Counts of the store's locks and the oldest live lock's age (operators, the lock gauges). */
  lockStats(): Promise<LockStats>;
  /** The store's locks by key, expired ones included until reaped (operators). */
  listLocks(query?: { limit?: number }): Promise<Lock[]>;
  /** The next value of the counter `(scope, key)`: 1, 2, 3, ... never twice (e.g. an asset's upload versions). */
  allocateVersion(scope: string, key: string): Promise<number>;
  /**
   * Remembers a client request (`Idempotency-Key`): stores it unless `(scope, key)` exists and
   * returns the stored record either way (compare its `requestHash`).
   */
  rememberRequest(record: Omit<RequestRecord, 'createdAt'>): Promise<{ created: boolean; record: RequestRecord }>;
  /** The remembered request `(scope, key)`, or null. */
  getRequest(scope: string, key: string): Promise<RequestRecord | null>;
  /**
   * Calls `listener` when a worker of THIS process commits a run out of `running` (succeeded,
   * failed, dead-lettered, parked). A latency hint for waiters, like `onWake`: runs finished by
   * other processes are not reported, so waiters also poll. Returns an unsubscribe function.
   */
  onRunEnded(listener: (event: RunEndedEvent) => void): () => void;
  /**
   * Resolves after `ms`, or as soon as a worker of this process ends run `runId` (see
   * {@link Kiln.onRunEnded}): the wait between two polls of a waiter.
   */
  untilRunEnds(runId: string, ms: number): Promise<void>;
  /** Resolves when the run reaches one of `statuses` (default: any not queued/running) or `timeoutMs` passes. */
  waitForRun(runId: string, options?: { timeoutMs?: number; statuses?: readonly RunStatus[] }): Promise<RunDetail>;
}

export type { JsonValue, RunEndedEvent, ArtifactGcOptions, ArtifactGcReport, VerifyOptions, VerifyReport };
