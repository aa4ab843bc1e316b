/**
 * The `jobs` sub-port: the job path itself. Runs are submitted, their jobs claimed under a
 * lease, kept alive by heartbeats, and committed (or handed back) fenced by that lease; expired
 * leases are reaped. Every mutation carries its lease (job id + token): a stale token changes
 * nothing. Time is the store's clock.
 */
import type { AdmissionCode } from '../errors.ts';
import type { PublicationRequest } from './publications.ts';
import type { Job, JobKind, JsonValue, Run, RunStatus, StageErrorRecord } from '../model.ts';

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
 * A new run (one element of {@link JobsPort.submit}). The store creates the run, one
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
  /** See `Run.traceParent`; its trace id should equal `traceId`. */
  traceParent?: string;
  /**
   * Admission limits, checked in the same transaction as the creation (so concurrent submissions
   * never overshoot them). Absent: no check. See {@link SubmitAdmission}.
   */
  admission?: SubmitAdmission;
}

/** Runs whose status counts against a tenant's `maxInFlightRuns`: a worker has yet to finish them. */
export const IN_FLIGHT_RUN_STATUSES = ['queued', 'running'] as const;

/**
 * The admission limits of one request of {@link JobsPort.submit}. They apply only when the
 * request would create a run: one answered by its idempotency key is never refused. Checked in
 * this order, each seeing the requests of the batch before it; a refusal rejects the whole batch
 * with an `AdmissionRefusedError` (`details.index` = the request's position, `details.limit`):
 * - `refuse`: refused with that code (a limit the caller keeps, e.g. its submit rate);
 * - `maxInFlightRuns`: `TENANT_IN_FLIGHT_LIMIT` when the request's tenant already has this many
 *   runs `queued` or `running` (runs without a tenant count as one tenant of their own);
 * - `maxBacklog`: `QUEUE_BACKLOG_FULL` when `firstJob.queue` already holds this many `ready`
 *   jobs (due now or later).
 */
export interface SubmitAdmission {
  refuse?: { code: AdmissionCode; retryAfterMs: number };
  maxInFlightRuns?: number;
  maxBacklog?: number;
  /** The `retryAfterMs` of an in-flight or backlog refusal. */
  retryAfterMs: number;
}

/** Result of one request of {@link JobsPort.submit}. */
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
  /**
   * The queue's cap on retries running at once (its policy's `maxRetriesRunning`); absent: no
   * cap. A retry is a job claimed before whose attempt was not handed back (`attempt >= 1` when
   * claimed: a failed attempt retried, or an expired lease taken over after a crash); it is
   * running while leased with an unexpired lease. With `n` retries of the queue running, the
   * claim takes at most `max(0, cap - n)` retries; first attempts are never held back by it. See
   * {@link JobsPort.claim}.
   */
  maxRetriesRunning?: number;
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

/** A held job handed back unworked (see {@link JobsPort.release}). */
export interface JobRelease extends LeaseRef {
  /** Ready again this long from now; default 0 (at once). */
  delayMs?: number;
  /**
   * The job goes back because its stage's lock is held: `lockWaitSince` is set to now unless
   * already set (the wait goes on). Any other hand-back clears it.
   */
  lockWait?: boolean;
}

/** The lock a completion ran under (see {@link CompleteStageRequest.lock}). */
export interface LockFence {
  key: string;
  fence: number;
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

/** Outcome of one commit item (see {@link JobsPort.commit}). */
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
  /**
   * The lock the attempt ran under (its stage's `lock` policy): its publications are fenced by
   * it. Each is refused (counted in `publicationsRefused`) unless `fence` is still the lock's
   * current fence at commit, i.e. the lock on `key` exists with this fence (nobody took it over,
   * it was not reaped); an accepted one is stored with fence `max(lease fence, lock fence)`, so
   * the compare-and-set orders writers of one subject version by lock fence.
   */
  lock?: LockFence;
}


/**
 * What to do with a failed attempt; decided by the engine from the error class and policy (see
 * `decideFailure`): transient errors retry, then dead-letter; intervention errors retry, then
 * park; permanent errors fail the run at once.
 */
export type FailureDecision =
  /** Job back to `ready` at `now + delayMs`; stage record `failed` with the error. */
  | { action: 'retry'; delayMs: number }
  /** Job `parked`, run `parked`, stage record `failed`; `OperatorPort.resumeRun` continues here. */
  | { action: 'park' }
  /**
   * The attempts ran out (transient errors, or the lease kept expiring): a replay may succeed.
   * Job `dead`, stage record `dead_lettered` with `finishedAt` (a rollback job: `rollbackStatus
   * = dead_lettered`), run `dead_lettered` with the error, replayable by `OperatorPort.replayJob`. `rollback`,
   * if given, is enqueued (the latest completed stage with a rollback handler), that stage's
   * `rollbackStatus` becomes `pending`, and the run is no longer replayable (`RUN_COMPENSATED`);
   * the last compensation to complete ends it `failed`.
   */
  | { action: 'dead_letter'; rollback: JobSpec | null }
  /**
   * A permanent error: neither another attempt nor a replay can succeed. Job `dead` (kept, with
   * `lastError`, for inspection; `OperatorPort.replayJob` refuses it), stage record `failed` with the error and
   * `finishedAt` (a rollback job: `rollbackStatus = dead_lettered`), run `error` = the error.
   * Without `rollback` the run ends `failed` (`currentStage` null, `finishedAt` now). With
   * `rollback`, it is enqueued as for `dead_letter` and the run keeps its status (`running`) while
   * its compensations run; the last one to complete ends it `failed`.
   */
  | { action: 'fail'; rollback: JobSpec | null };

/**
 * Records a failed attempt, in one transaction fenced by the lease: the job's `lastError`, the
 * stage record's error and duration (stage jobs), and the effects `decision` lists (see
 * {@link FailureDecision}). The store applies the decision as given and never reads the
 * error's class: the engine decides.
 */
export interface FailStageRequest {
  lease: LeaseRef;
  error: StageErrorRecord;
  durationMs: number;
  decision: FailureDecision;
}

/** One item of {@link JobsPort.commit}. */
export type CommitItem = ({ type: 'complete' } & CompleteStageRequest) | ({ type: 'fail' } & FailStageRequest);

/** Expired leases the reaper handed back. */
export interface ReapResult {
  /** Jobs made ready again, per queue. */
  redelivered: Record<string, number>;
}

/** The job path; each method is ONE atomic unit (one transaction or script). */
export interface JobsPort {
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
   * another `inputChecksum`; `details.runId` names that run when it was stored before the call;
   * `AdmissionRefusedError` when a limit of {@link SubmitRunRequest.admission} refuses it).
   * Store errors (e.g. `StoreUnavailableError`) carry no index.
   */
  submit(requests: readonly SubmitRunRequest[]): Promise<SubmitRunResult[]>;

  /**
   * Claims, in ONE transaction, up to `limit` jobs from each requested queue: `ready` jobs with
   * `availableAt <= now`, and `leased` jobs whose lease expired (a redelivery:
   * `redeliveries + 1`). Nothing is claimed from a paused queue. No job is ever held by two
   * claimers at once. Results are grouped in request order.
   *
   * Claim order is fair across tenants (`Job.tenant`; null is one more tenant) with priority
   * first: each candidate gets its rank among the candidates of its tenant and priority (by
   * availableAt, then id; 0 = that tenant's oldest), and candidates are taken by priority (lower
   * first), then rank, then availableAt, then id. So within a priority the tenants with due
   * jobs take turns, oldest head first: however many jobs tenant A has queued, at most one of
   * them is claimed before tenant B's oldest due job of the same priority.
   *
   * The candidates are the ready jobs plus the first `limit` expired leases in the queue's plain
   * order (priority, availableAt, id; the reaper makes the others ready). With a retry cap
   * ({@link ClaimRequest.maxRetriesRunning}) they are the first attempts (`attempt = 0`) plus
   * the first `max(0, cap - running retries)` retries (ready or expired) in plain order.
   *
   * Requests naming the same queue are served from one such order: the first request gets its
   * first `limit` jobs, the next request the following ones (with the smallest cap any of them
   * carries).
   */
  claim(requests: readonly ClaimRequest[]): Promise<ClaimedJob[]>;

  /** Heartbeats: extends each lease still held by `leaseMs` (as granted at claim), in input order. */
  renew(renewals: readonly LeaseRenewal[]): Promise<LeaseStatus[]>;

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
   * Hands held jobs back unworked (graceful shutdown, or a stage waiting for its lock): `ready`
   * at `now + delayMs` (now by default), the claim's attempt not counted (`attempt - 1`, stage
   * record `attempts - 1`, stage record back to `pending`), `lockWaitSince` as the release says
   * (see {@link JobRelease.lockWait}). Stale tokens are ignored. Returns how many were released.
   */
  release(leases: readonly JobRelease[]): Promise<number>;

  /**
   * Moves jobs whose lease expired back to `ready` (`redeliveries + 1`), so queue depth is right
   * even when no worker polls that queue.
   */
  reap(): Promise<ReapResult>;
}
