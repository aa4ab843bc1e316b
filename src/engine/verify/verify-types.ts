/**
 * What `kiln verify` (and `GET /v1/verify`) reports: the checks it runs, the kinds of violation
 * it finds (stable codes, like error codes: scripts and alerts branch on them), and the report.
 */

/** The checks of an audit, in the order they run. */
export const VerifyCheck = {
  /** Every publication points to an artifact that exists and whose bytes hash to its name. */
  publications: 'publications',
  /** Every artifact a `ready` cache entry references exists and hashes to its name. */
  cache: 'cache',
  /** No job is still leased longer than the lease grace after its lease ended (nothing reaped it). */
  leases: 'leases',
  /** Every run not ended has exactly one live job (a parked run: its parked job; a dead-lettered one: its dead job or one compensation); no ended run has one. */
  runs: 'runs',
  /** A ledger entry exists exactly for each succeeded stage (and each succeeded rollback). */
  ledger: 'ledger',
  /** No temp file of the artifact store was last written longer ago than the temp grace. */
  temps: 'temps',
} as const;
export type VerifyCheck = (typeof VerifyCheck)[keyof typeof VerifyCheck];

/** Every check, in order. */
export const VERIFY_CHECKS: readonly VerifyCheck[] = Object.values(VerifyCheck);

/** What a violation is; each code is stable. */
export const ViolationKind = {
  /** A publication's artifact does not exist (or its ref is not one an artifact can have). */
  PUBLICATION_ARTIFACT_MISSING: 'PUBLICATION_ARTIFACT_MISSING',
  /** A publication's artifact exists but its bytes do not hash to its name (or its size record disagrees). */
  PUBLICATION_ARTIFACT_CORRUPT: 'PUBLICATION_ARTIFACT_CORRUPT',
  /** An artifact referenced by a `ready` cache entry does not exist. */
  CACHE_ARTIFACT_MISSING: 'CACHE_ARTIFACT_MISSING',
  /** An artifact referenced by a `ready` cache entry is damaged. */
  CACHE_ARTIFACT_CORRUPT: 'CACHE_ARTIFACT_CORRUPT',
  /** A job is still `leased` longer than the grace after its lease ended: no reaper and no claim took it back. */
  LEASE_EXPIRED_UNREAPED: 'LEASE_EXPIRED_UNREAPED',
  /** A run that has not ended has no job that can move it on: it is stuck. */
  RUN_WITHOUT_JOB: 'RUN_WITHOUT_JOB',
  /** A run has more than one live job. */
  RUN_WITH_EXTRA_JOBS: 'RUN_WITH_EXTRA_JOBS',
  /** A run's one live job is in a state its run's status does not allow (e.g. a parked run whose job is ready). */
  RUN_JOB_STATE_MISMATCH: 'RUN_JOB_STATE_MISMATCH',
  /** A run that ended (succeeded, failed, cancelled, superseded) still has a live job. */
  ENDED_RUN_WITH_LIVE_JOB: 'ENDED_RUN_WITH_LIVE_JOB',
  /** A stage (or rollback) succeeded and the ledger has no entry for it. */
  LEDGER_ENTRY_MISSING: 'LEDGER_ENTRY_MISSING',
  /** The ledger has an entry for a stage (or rollback) that did not succeed, or that its run does not have. */
  LEDGER_ENTRY_UNEXPECTED: 'LEDGER_ENTRY_UNEXPECTED',
  /** A temp file of the artifact store was last written longer ago than the temp grace (a crashed write nobody collected). */
  TEMP_FILE_ORPHANED: 'TEMP_FILE_ORPHANED',
} as const;
export type ViolationKind = (typeof ViolationKind)[keyof typeof ViolationKind];

/** The records a violation involves; only those that apply are set. */
export interface ViolationIds {
  runId?: string;
  jobId?: string;
  /** Several jobs of one run (`RUN_WITH_EXTRA_JOBS`, `ENDED_RUN_WITH_LIVE_JOB`). */
  jobIds?: string[];
  stage?: string;
  subjectId?: string;
  profile?: string;
  cache?: string;
  key?: string;
  artifactRef?: string;
  ledgerKey?: string;
  /** A temp file, relative to the artifact store. */
  tempPath?: string;
}

/** One broken invariant. */
export interface Violation {
  kind: ViolationKind;
  check: VerifyCheck;
  /** One line for people, naming the ids. */
  message: string;
  ids: ViolationIds;
  /** Facts beside the ids (statuses, states, how long overdue). */
  details: Record<string, string | number | boolean | null>;
}

/** How one check went. */
export interface CheckSummary {
  check: VerifyCheck;
  /** Records read (publications, ready cache entries, expired leases, runs, runs, temp files). */
  scanned: number;
  violations: number;
  /** False when the audit stopped before this check read everything. */
  complete: boolean;
}

/** Progress, reported after each page. */
export interface VerifyProgress {
  check: VerifyCheck;
  /** Records this check read so far. */
  scanned: number;
  /** Violations found so far, all checks. */
  violations: number;
}

/** Options of an audit. */
export interface VerifyOptions {
  /** A job still leased longer than this after its lease ended is a violation. */
  leaseGraceMs: number;
  /** A temp file last written longer ago than this is a violation. */
  tempGraceMs: number;
  /** The checks to run. @default every check */
  checks?: readonly VerifyCheck[];
  /** At most this many violations are listed (all are counted). @default 1000 */
  maxViolations?: number;
  /** Records read per store call. @default 500 */
  pageSize?: number;
  /** Stops the audit early: the report says `complete: false`. */
  signal?: AbortSignal;
  /** Called after each page read. */
  onProgress?: (progress: VerifyProgress) => void;
}

/** What an audit found. */
export interface VerifyReport {
  /** Every check ran to the end and found nothing. */
  ok: boolean;
  /** False when the audit was stopped early (what it read was checked). */
  complete: boolean;
  /** Engine clock, epoch ms. */
  startedAt: number;
  durationMs: number;
  leaseGraceMs: number;
  tempGraceMs: number;
  /** The checks run, in order. */
  checks: CheckSummary[];
  /** Violations found, listed or not. */
  violationCount: number;
  /** The first `maxViolations` violations, in the order found. */
  violations: Violation[];
}
