/**
 * The `audit` sub-port: what `kiln verify` reads to check the store's invariants (DESIGN.md,
 * Operator tools). Nothing here changes the store. Every method reads ONE page in one consistent
 * read (one statement or read transaction); a scan goes on from the `next` cursor of the page
 * before, so a store of any size is read in bounded pieces. Two pages are two snapshots: whoever
 * reports a finding that spans the store and something else (an artifact file) re-reads first.
 *
 * Scans walk primary keys or existing indexes, in the byte order of their keys (every store
 * agrees on it): publications by `(subjectId, profile)`, cache entries by `(cache, key)`, runs
 * by id, expired leases by `(leaseUntil, jobId)`.
 */
import type { JobKind, JobState, RollbackStatus, RunStatus, StageStatus } from '../model.ts';
import type { Publication } from './publications.ts';

/** Where a page starts and how much it reads. */
export interface AuditPageRequest {
  /** The `next` of the previous page of the same scan; absent or null starts at the beginning. */
  after?: string | null;
  /** Rows read at most (at least 1). */
  limit: number;
}

/** One page of a scan. */
export interface AuditPage<T> {
  /** What the rows read hold, in scan order (a page may read rows and return no item). */
  items: T[];
  /** Rows read by this page, for progress. */
  scanned: number;
  /** Opaque cursor of the next page (pass it as `after`); null when the scan is complete. */
  next: string | null;
}

/** A `ready` cache entry and the artifacts its value references. */
export interface AuditCacheEntry {
  cache: string;
  key: string;
  /** Every `sha256:<64 hex>` in the value's JSON text (as `ArtifactRefsPort.list` finds them), sorted, unique, never empty. */
  artifactRefs: string[];
}

/** A job whose lease ended more than the grace ago and that is still `leased` (no reaper or claim took it back). */
export interface ExpiredLease {
  jobId: string;
  runId: string;
  queue: string;
  stage: string;
  kind: JobKind;
  leaseOwner: string | null;
  /** Store clock, epoch ms. */
  leaseUntil: number;
  /** How long ago the lease ended, by the store clock at the read. */
  overdueMs: number;
}

/** A job as the run audit sees it. */
export interface AuditJob {
  id: string;
  stage: string;
  kind: JobKind;
  state: JobState;
}

/** A run with every job it has (live or dead), read together. */
export interface RunJobs {
  runId: string;
  pipeline: string;
  status: RunStatus;
  currentStage: string | null;
  /** By job id. */
  jobs: AuditJob[];
}

/** Why a ledger entry and a stage record disagree. */
export const LedgerProblem = {
  /** The stage `succeeded` (or its rollback did) and the ledger holds no entry for it. */
  missing: 'missing',
  /** The ledger holds an entry for a stage (or rollback) that did not succeed, or that the run does not have. */
  unexpected: 'unexpected',
} as const;
export type LedgerProblem = (typeof LedgerProblem)[keyof typeof LedgerProblem];

/** A stage (or rollback) whose ledger entry is missing or should not be there. */
export interface LedgerMismatch {
  runId: string;
  stage: string;
  /** `stage`: the stage's own entry; `rollback`: its compensation's. */
  kind: JobKind;
  problem: LedgerProblem;
  /** The entry's idempotency key (for `missing`, the key it would have: `core/keys.ts`). */
  key: string;
  /** The stage record's status, or null when the run has no stage of that name. */
  stageStatus: StageStatus | null;
  rollbackStatus: RollbackStatus | null;
}

/** Paged, read-only scans for the invariant audit; each method is one consistent read. */
export interface AuditPort {
  /** Publications, by `(subjectId, profile)`. */
  publications(page: AuditPageRequest): Promise<AuditPage<Publication>>;

  /**
   * `ready` cache entries whose value references at least one artifact, by `(cache, key)`;
   * `scanned` counts every `ready` entry read.
   */
  readyCacheEntries(page: AuditPageRequest): Promise<AuditPage<AuditCacheEntry>>;

  /** `leased` jobs whose lease ended more than `graceMs` before now (store clock), by `(leaseUntil, jobId)`. */
  expiredLeases(query: AuditPageRequest & { graceMs: number }): Promise<AuditPage<ExpiredLease>>;

  /**
   * Scans runs by id (`limit` runs per page) and returns those not in a terminal status, and
   * those in a terminal status that still have a live (not `dead`) job, each with all its jobs.
   */
  runJobs(page: AuditPageRequest): Promise<AuditPage<RunJobs>>;

  /**
   * Scans runs by id (`limit` runs per page) and returns, for those runs, every disagreement
   * between the ledger and the stage records: a ledger entry of kind `stage` exists exactly for
   * each `succeeded` stage, and one of kind `rollback` exactly for each stage whose
   * `rollbackStatus` is `succeeded`. By run id, then stage, then kind.
   */
  ledgerMismatches(page: AuditPageRequest): Promise<AuditPage<LedgerMismatch>>;
}
