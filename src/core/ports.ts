/**
 * The ports the engine talks to. Each Backend method is ONE atomic unit (one transaction) and the
 * engine never chains two calls expecting atomicity. Every mutation of a job carries its lease
 * (job id + token): a stale token changes nothing. Time is the store's clock (`Backend.now`).
 * The conformance suite (`test/conformance/backend-suite.ts`) defines this behaviour once.
 */
import type { ArtifactRef, ArtifactStore, StoredArtifact } from './artifact-store.ts';
import type { CacheAcquireRequest, CacheAcquireResult, CacheCompleteRequest, CacheEntry, CacheFailRequest } from './cache-entries.ts';
import type { ErrorClass } from './errors.ts';
import type { Publication, PublicationRequest, RequestRecord } from './publications.ts';
import type {
  Job,
  JobKind,
  JsonValue,
  LedgerEntry,
  QueueStats,
  Run,
  RunStatus,
  StageErrorRecord,
  StageRecord,
} from './model.ts';

/** What a backend can and cannot do; differences are declared, never silently emulated. */
export interface BackendCapabilities {
  /** Name for logs and metrics, e.g. `sqlite`. */
  readonly name: string;
  /** Several processes may share the store. */
  readonly multiProcess: boolean;
  /** `onWake` delivers hints from other processes too (LISTEN/NOTIFY), not only this one. */
  readonly crossProcessWake: boolean;
}

/** How to enqueue one job: the stage it runs and its queue policy. */
export interface JobSpec {
  stage: string;
  /** `<pipeline>.<stage>`. */
  queue: string;
  kind: JobKind;
  maxAttempts: number;
  /** Lower runs first. */
  priority: number;
}

/**
 * A new run (one element of {@link Backend.submitRuns}). The backend creates the run, one
 * `pending` stage record per stage, and the first job.
 */
export interface SubmitRunRequest {
  pipeline: string;
  pipelineVersion: number;
  input: JsonValue;
  /** sha256 hex of the canonical input; used to detect idempotency-key reuse. */
  inputChecksum: string;
  /** Stage names in order. */
  stages: readonly string[];
  /** The job enqueued `ready` at once; its stage must be one of `stages` (else `ValidationError`). */
  firstJob: JobSpec;
  /**
   * Deduplicates submissions of `pipeline`: an existing run with this key is returned as is
   * (`created: false`) whatever its status; the same key with another `inputChecksum` is a
   * `ConflictError` with code `IDEMPOTENCY_KEY_REUSED`.
   */
  idempotencyKey?: string;
  /**
   * With `subjectVersion`: runs of the same pipeline and subject with a lower version that have
   * not ended become `superseded` (their jobs are deleted, so a worker holding one cannot commit).
   * If a run of a higher version already exists, the new run is created `superseded` at once.
   */
  subjectId?: string;
  subjectVersion?: number;
  tenant?: string;
  traceId?: string;
}

/** Result of one request of {@link Backend.submitRuns}. */
export interface SubmitRunResult {
  /** The run as this request left it (a later request of the same batch may have changed it since). */
  run: Run;
  /** False when an existing run was returned for the idempotency key. */
  created: boolean;
}

/** A request to claim jobs from one queue. */
export interface ClaimRequest {
  queue: string;
  workerId: string;
  /** At most this many jobs. */
  limit: number;
  /** Lease granted to each claimed job; renewals extend by the same amount. */
  leaseMs: number;
}

/**
 * A claimed job with what its handler needs. Claiming sets `state = leased`, a fresh
 * `leaseToken`, a new `fence` (greater than every fence issued before by this store),
 * `leaseUntil = now + leaseMs`, `attempt + 1`; the stage record becomes `running` with
 * `attempts + 1`; a `queued` run becomes `running`.
 */
export interface ClaimedJob {
  job: Job;
  run: Run;
  /** Outputs of the run's succeeded stages, by stage name. */
  outputs: Record<string, JsonValue>;
  /**
   * Present when the job's idempotency key is already in the ledger: the engine must not run the
   * handler and commits this output instead (an idempotent skip).
   */
  ledgerOutput?: JsonValue;
  /**
   * True when `attempt > maxAttempts` (the job kept losing its lease, e.g. it crashes its worker):
   * the engine dead-letters it without running the handler.
   */
  exhausted: boolean;
  /** True when this claim took over an expired lease (a redelivery, counted once, here). */
  redelivered: boolean;
}

/** Identifies a held lease. */
export interface LeaseRef {
  jobId: string;
  token: string;
}

/** A heartbeat: the lease, plus the latest progress marker to record, if any. */
export interface LeaseRenewal extends LeaseRef {
  progress?: JsonValue;
}

/** Outcome of renewing one lease. */
export type LeaseStatus =
  /** Extended to `leaseUntil`. */
  | { status: 'renewed'; leaseUntil: number }
  /** The token no longer matches, the lease expired, or the job is gone: stop work. */
  | { status: 'lost' }
  /** The run was cancelled or superseded: stop work. */
  | { status: 'cancelled' };

/** Outcome of one commit item (see {@link Backend.commit}). */
export type CommitResult =
  | {
      outcome: 'committed';
      runStatus: RunStatus;
      /** Publications of the item that compare-and-set refused (absent or 0 when none). */
      publicationsRefused?: number;
    }
  /** Refused and nothing changed: the token does not match or the lease expired. */
  | { outcome: 'lease_lost' }
  /** Refused and nothing changed: the run was cancelled or superseded meanwhile. */
  | { outcome: 'cancelled' };

/**
 * Marks the leased job's stage (or rollback) done, in one transaction fenced by the lease:
 * ledger entry for the job's idempotency key (kept if already there), stage record
 * `succeeded` with output and timings (for a rollback job: `rollbackStatus = succeeded`),
 * the `next` job enqueued (its stage record stays `pending`), the job deleted. With
 * `next: null` a stage job ends its run `succeeded`; a rollback job ends it `failed`.
 */
export interface CompleteStageRequest {
  lease: LeaseRef;
  output: JsonValue;
  durationMs: number;
  next: JobSpec | null;
  /**
   * Publications to set in the same transaction, each by compare-and-set (see
   * {@link PublicationRequest}). A refused publication does not refuse the item: the stage still
   * commits and the result counts it in `publicationsRefused`.
   */
  publish?: readonly PublicationRequest[];
}


/**
 * What to do with a failed attempt; decided by the engine from the error class and policy (see
 * `decideFailure`): transient errors retry, then dead-letter; intervention errors retry, then
 * park; permanent errors fail the run at once.
 */
export type FailureDecision =
  /** Job back to `ready` at `now + delayMs`; stage record `failed` with the error. */
  | { action: 'retry'; delayMs: number }
  /** Job `parked`, run `parked`, stage record `failed`; `resumeRun` continues here. */
  | { action: 'park' }
  /**
   * The attempts ran out (transient errors, or the lease kept expiring): a replay may succeed.
   * Job `dead`, stage record `dead_lettered` with `finishedAt` (a rollback job: `rollbackStatus
   * = dead_lettered`), run `dead_lettered` with the error, replayable by `replayJob`. `rollback`,
   * if given, is enqueued (the latest completed stage with a rollback handler), that stage's
   * `rollbackStatus` becomes `pending`, and the run is no longer replayable (`RUN_COMPENSATED`);
   * the last compensation to complete ends it `failed`.
   */
  | { action: 'dead_letter'; rollback: JobSpec | null }
  /**
   * A permanent error: neither another attempt nor a replay can succeed. Job `dead` (kept, with
   * `lastError`, for inspection; `replayJob` refuses it), stage record `failed` with the error and
   * `finishedAt` (a rollback job: `rollbackStatus = dead_lettered`), run `error` = the error.
   * Without `rollback` the run ends `failed` (`currentStage` null, `finishedAt` now). With
   * `rollback`, it is enqueued as for `dead_letter` and the run keeps its status (`running`) while
   * its compensations run; the last one to complete ends it `failed`.
   */
  | { action: 'fail'; rollback: JobSpec | null };

/**
 * Records a failed attempt, in one transaction fenced by the lease: the job's `lastError`, the
 * stage record's error and duration (stage jobs), and the effects `decision` lists (see
 * {@link FailureDecision}). The backend applies the decision as given and never reads the
 * error's class: the engine decides.
 */
export interface FailStageRequest {
  lease: LeaseRef;
  error: StageErrorRecord;
  durationMs: number;
  decision: FailureDecision;
}

/** One item of {@link Backend.commit}. */
export type CommitItem = ({ type: 'complete' } & CompleteStageRequest) | ({ type: 'fail' } & FailStageRequest);

/** Filter for {@link Backend.listRuns}; newest first. */
export interface ListRunsQuery {
  pipeline?: string;
  status?: RunStatus;
  /** Only runs of this subject (e.g. every version of one asset). */
  subjectId?: string;
  /** Only runs with an id lower than this (pagination). */
  before?: string;
  limit: number;
}

/** Filter for {@link Backend.listJobs}; oldest first. */
export interface ListJobsQuery {
  queue?: string;
  runId?: string;
  state?: Job['state'];
  limit: number;
}

/** A run with its stage records in pipeline order. */
export interface RunDetail {
  run: Run;
  stages: StageRecord[];
}

/** Expired leases the reaper handed back. */
export interface ReapResult {
  /** Jobs made ready again, per queue. */
  redelivered: Record<string, number>;
}

/** Result of applying migrations. */
export interface MigrationResult {
  /** Versions applied by this call (empty when already up to date). */
  applied: number[];
  /** Schema version now in force. */
  version: number;
}

/** The store's schema version next to the newest this code knows (see {@link Backend.schemaVersion}). */
export interface SchemaVersionInfo {
  /** Version recorded in the store; 0 when it was never migrated. */
  current: number;
  /** Newest version this code's migrations reach. */
  latest: number;
}

/**
 * The store: the single source of truth for runs, stages, jobs, leases and the ledger.
 * Implementations: memory (reference), sqlite, postgres.
 */
export interface Backend {
  readonly capabilities: BackendCapabilities;

  /** Applies pending migrations; safe when several processes call it at once. */
  migrate(): Promise<MigrationResult>;

  /**
   * Reads the schema version in force, changing nothing (no migration, no lock, works before
   * `migrate`): `current < latest` means migrations are pending, `current > latest` that newer
   * code migrated the store. For health checks (`kiln doctor`).
   */
  schemaVersion(): Promise<SchemaVersionInfo>;

  /** The store's clock, epoch ms. */
  now(): Promise<number>;

  /**
   * Submits runs in ONE transaction, with the same outcome as submitting them one at a time in
   * input order except that the batch is all or nothing. Each request, seeing the effects of the
   * requests before it:
   * - with an `idempotencyKey` already held by a run of its pipeline (stored before the call or
   *   created earlier in the batch) returns that run as is, `created: false`, whatever its status;
   * - otherwise creates the run (`queued`), one `pending` stage record per stage and a `ready`
   *   job for `firstJob` (`created: true`), then applies subject supersession (see
   *   {@link SubmitRunRequest.subjectId}): v1 then v2 of one subject in one batch leaves v1
   *   `superseded`; v2 then v1 creates v1 `superseded`, with no job.
   *
   * Results are in input order, one per request; each `run` is as its request left it (v1 of
   * the example above reads `queued`). Wake hints fire after the commit, once per queue that got
   * a ready job. An empty batch returns `[]`.
   *
   * Failures reject the whole call and store nothing of the batch, with the error of the first
   * failing request, `details.index` being its position in `requests`: first every request is
   * checked on its own (`ValidationError` when `firstJob.stage` is not one of `stages`), then
   * they are applied in order (`ConflictError` `IDEMPOTENCY_KEY_REUSED` when the key's run has
   * another `inputChecksum`; `details.runId` names that run when it was stored before the call).
   * Store errors (e.g. `BackendUnavailableError`) carry no index.
   */
  submitRuns(requests: readonly SubmitRunRequest[]): Promise<SubmitRunResult[]>;

  /**
   * Claims, in ONE transaction, up to `limit` jobs from each requested queue: `ready` jobs with
   * `availableAt <= now`, and `leased` jobs whose lease expired (a redelivery:
   * `redeliveries + 1`), ordered by priority (lower first), then availableAt, then id. Nothing is
   * claimed from a paused queue. No job is ever held by two claimers at once. Results are grouped
   * in request order.
   */
  claimJobs(requests: readonly ClaimRequest[]): Promise<ClaimedJob[]>;

  /** Heartbeats: extends each lease still held by `leaseMs` (as granted at claim), in input order. */
  renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseStatus[]>;

  /**
   * Commits finished attempts — completions ({@link CompleteStageRequest}) and failures
   * ({@link FailStageRequest}) — in ONE transaction (group commit). Each item is fenced by its
   * own lease and applied in order as if alone: a refused item changes nothing and does not
   * affect the others. Results are in input order; a committed item reports its run's status
   * after it (e.g. `failed` for a `fail` decision without rollback, `running` while compensations
   * run, `dead_lettered` for `dead_letter` decisions).
   */
  commit(items: readonly CommitItem[]): Promise<CommitResult[]>;

  /**
   * Hands held jobs back unworked (graceful shutdown): `ready` now, the claim's attempt not
   * counted (`attempt - 1`, stage record `attempts - 1`, stage record back to `pending`).
   * Stale tokens are ignored. Returns how many were released.
   */
  releaseJobs(leases: readonly LeaseRef[]): Promise<number>;

  /**
   * Moves jobs whose lease expired back to `ready` (`redeliveries + 1`), so queue depth is right
   * even when no worker polls that queue.
   */
  reapExpiredLeases(): Promise<ReapResult>;

  /**
   * Cancels a run that has not ended: run `cancelled` (error code `CANCELLED`, message `reason`),
   * its jobs deleted, stages not yet succeeded become `skipped`. `INVALID_TRANSITION` if it ended;
   * `NotFoundError` if unknown.
   */
  cancelRun(runId: string, reason: string): Promise<Run>;

  /** Parked run -> `running`; its parked job -> `ready` now with `attempt = 0`. `INVALID_TRANSITION` otherwise. */
  resumeRun(runId: string): Promise<Run>;

  /**
   * Dead job of a `dead_lettered` run -> `ready` now with `attempt = 0`; its stage record
   * `pending`; its run `running` with `error = null`. `INVALID_TRANSITION` if the job is not dead
   * or its run ended `failed` (a permanent failure: submit a new run instead), `RUN_COMPENSATED`
   * if a rollback was enqueued for the run; `NotFoundError` if unknown.
   */
  replayJob(jobId: string): Promise<Job>;

  /** Pauses (no claims) or resumes a queue. Queues need not exist before. */
  setQueuePaused(queue: string, paused: boolean): Promise<void>;

  /**
   * Removes every `ready` job of the queue (leased ones finish) and cancels their runs
   * (reason `queue drained`). Returns how many jobs were removed.
   */
  drainQueue(queue: string): Promise<number>;

  getRun(runId: string): Promise<RunDetail | null>;
  listRuns(query: ListRunsQuery): Promise<Run[]>;
  getJob(jobId: string): Promise<Job | null>;
  listJobs(query: ListJobsQuery): Promise<Job[]>;
  /** Every queue that has jobs or was paused, by name. */
  queueStats(): Promise<QueueStats[]>;
  /** Ledger entries of a run, in completion order. */
  readLedger(runId: string): Promise<LedgerEntry[]>;

  /** The publication of `(subjectId, profile)`, or null. */
  getPublication(subjectId: string, profile: string): Promise<Publication | null>;

  /** Every publication of a subject, by profile name. */
  listPublications(subjectId: string): Promise<Publication[]>;

  /**
   * Removes the publications of a subject (every profile, or only `profiles`); returns how many.
   * Their artifacts stay until garbage collection finds them unreferenced.
   */
  deletePublications(subjectId: string, profiles?: readonly string[]): Promise<number>;

  /**
   * Increments the counter `(scope, key)` in ONE transaction and returns the new value: 1 on first
   * use, then 2, 3, ... with no value handed out twice, however many processes call at once (e.g.
   * the version of each upload of an asset).
   */
  allocateVersion(scope: string, key: string): Promise<number>;

  /**
   * Every artifact ref something may still read, for garbage collection: the artifact of every
   * publication; every `sha256:<64 hex>` string anywhere in the value of a cache entry (any
   * status); and every such string in the input and the stage outputs of runs that may still run
   * or be replayed (`queued`, `running`, `parked`, `dead_lettered`). Sorted, no duplicates.
   */
  listReferencedArtifacts(): Promise<string[]>;

  /**
   * Single-flight entry point, in ONE transaction on the store clock: reads `(cache, key)` and,
   * when nothing servable is fresh and no live builder holds it, makes this caller the builder
   * (`building`, or `ready` + builder lease when revalidating a stale value) with a new fence.
   * Of any number of concurrent callers for one key, exactly one gets `build` (or `stale` with
   * `revalidate: true`); the others get `building` (or `stale` with `revalidate: false`).
   */
  acquireCacheEntry(request: CacheAcquireRequest): Promise<CacheAcquireResult>;

  /** Reads `(cache, key)` without changing it; null when absent. */
  getCacheEntry(cache: string, key: string): Promise<CacheEntry | null>;

  /**
   * Stores the built value (`ready`, builder lease cleared, `expiresAt = now + ttlMs`,
   * `staleUntil = expiresAt + staleMs` or null) if `token` is still the entry's builder token
   * (even past its lease, as long as nobody took it over). Returns false, changing nothing, otherwise.
   */
  completeCacheEntry(request: CacheCompleteRequest): Promise<boolean>;

  /** Ends a build without a value (see {@link CacheFailRequest}); false, changing nothing, if `token` is not the builder. */
  failCacheEntry(request: CacheFailRequest): Promise<boolean>;

  /** Extends the builder lease by `leaseMs` from now if `token` still holds it. */
  renewCacheLease(cache: string, key: string, token: string, leaseMs: number): Promise<boolean>;

  /**
   * Housekeeping: deletes entries that can no longer be served: `ready` past `staleUntil` (or
   * `expiresAt` when not stale-able) and `failed` past `expiresAt`, with no live builder lease;
   * and `building` entries whose builder lease expired more than `graceMs` ago. Returns how many.
   */
  deleteExpiredCacheEntries(graceMs: number): Promise<number>;

  /**
   * Stores `record` (with `createdAt` = now) unless `(scope, key)` exists; returns the stored
   * record either way and whether this call created it. The caller compares `requestHash`.
   */
  rememberRequest(record: Omit<RequestRecord, 'createdAt'>): Promise<{ created: boolean; record: RequestRecord }>;

  /** The remembered request `(scope, key)`, or null; changes nothing. */
  getRequest(scope: string, key: string): Promise<RequestRecord | null>;

  /**
   * Registers a latency hint fired when jobs may have become ready on `queue`; returns an
   * unsubscribe function. Correctness never depends on it: workers also poll.
   */
  onWake(listener: (queue: string) => void): () => void;

  close(): Promise<void>;
}

// The port's record types live in their own files; re-exported so that ports.ts stays the one import.
export { CacheEntryStatus } from './cache-entries.ts';
export type { CacheAcquireRequest, CacheAcquireResult, CacheCompleteRequest, CacheEntry, CacheFailRequest };
export type { Publication, PublicationRequest, RequestRecord };
export type { ArtifactRef, ArtifactStore, StoredArtifact };

/** Error classes, re-exported for ports' users. */
export type { ErrorClass };
