/**
 * What every store's `audit` sub-port shares: the cursors of its scans (opaque to callers: the
 * key of the last row read, as JSON), how a page ends, and the rows the audit statements return
 * (the same columns in SQLite and PostgreSQL; the memory store builds them too) with their
 * mapping to pages. Pure TypeScript with no driver import.
 */
import { ValidationError } from '../../core/errors.ts';
import { jobIdempotencyKey } from '../../core/keys.ts';
import { TERMINAL_RUN_STATUSES } from '../../core/model.ts';
import type { JobKind, JobState, RollbackStatus, RunStatus, StageStatus } from '../../core/model.ts';
import type { AuditCacheEntry, AuditPage, ExpiredLease, LedgerMismatch, LedgerProblem, RunJobs } from '../../core/ports/audit.ts';
import { collectArtifactRefs, sortedArtifactRefs } from './artifact-refs.ts';

/** The cursor after a row whose key is `key` (strings and numbers, in key order). */
export function encodeCursor(key: readonly (string | number)[]): string {
  return JSON.stringify(key);
}

/**
 * The key a cursor holds, checked against the kinds of its parts (`'string'`/`'number'`); null for
 * the start of a scan. A cursor that is not one of ours is a `ValidationError`.
 */
export function decodeCursor<K extends readonly ('string' | 'number')[]>(
  after: string | null | undefined,
  kinds: K,
): { [I in keyof K]: K[I] extends 'number' ? number : string } | null {
  if (after === null || after === undefined) return null;
  let key: unknown;
  try {
    key = JSON.parse(after);
  } catch {
    key = undefined;
  }
  const ok = Array.isArray(key) && key.length === kinds.length && kinds.every((kind, i) => typeof key[i] === kind);
  if (!ok) throw new ValidationError(`not an audit cursor of this scan: ${JSON.stringify(after)}`);
  return key as { [I in keyof K]: K[I] extends 'number' ? number : string };
}

/** A page's limit as a whole number of rows, at least 1. */
export function pageLimit(limit: number): number {
  return Math.max(1, Math.floor(limit));
}

/**
 * The page of `items` found among `scanned` rows read with `limit`: a page that read fewer rows
 * than its limit reached the end of the scan; otherwise the next one starts after `lastKey`.
 */
export function auditPage<T>(items: T[], scanned: number, limit: number, lastKey: readonly (string | number)[] | null): AuditPage<T> {
  return { items, scanned, next: scanned < limit || lastKey === null ? null : encodeCursor(lastKey) };
}

/** A `ready` cache entry as the scans read it: its value as JSON text. */
export interface CacheValueRow {
  cache: string;
  key: string;
  value: string;
}

/** The page of a `ready` cache entry scan: the entries whose value references an artifact. */
export function cacheEntryPage(rows: readonly CacheValueRow[], limit: number): AuditPage<AuditCacheEntry> {
  const items = rows.flatMap((row) => {
    const refs = new Set<string>();
    collectArtifactRefs(row.value, refs);
    return refs.size === 0 ? [] : [{ cache: row.cache, key: row.key, artifactRefs: sortedArtifactRefs(refs) }];
  });
  const last = rows.at(-1);
  return auditPage(items, rows.length, limit, last ? [last.cache, last.key] : null);
}

/** The cursor before every expired lease: `(leaseUntil, jobId)` below any stored one. */
export const FIRST_LEASE_KEY: readonly [number, string] = [Number.MIN_SAFE_INTEGER, ''];

/** A row of the SQL stores' expired-lease scan. */
export interface ExpiredLeaseRow {
  id: string;
  run_id: string;
  queue: string;
  stage: string;
  kind: JobKind;
  lease_owner: string | null;
  lease_until: number;
  overdue_ms: number;
}

/** The page of an expired-lease scan. */
export function expiredLeasePage(rows: readonly ExpiredLeaseRow[], limit: number): AuditPage<ExpiredLease> {
  const items = rows.map((row) => ({
    jobId: row.id,
    runId: row.run_id,
    queue: row.queue,
    stage: row.stage,
    kind: row.kind,
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
    overdueMs: row.overdue_ms,
  }));
  const last = items.at(-1);
  return auditPage(items, items.length, limit, last ? [last.leaseUntil, last.jobId] : null);
}

/** A row of the SQL stores' run scan: a run of the page with one of its jobs, or with NULLs when it has none. */
export interface RunJobRow {
  run_id: string;
  pipeline: string;
  status: RunStatus;
  current_stage: string | null;
  job_id: string | null;
  job_stage: string | null;
  job_kind: JobKind | null;
  job_state: JobState | null;
}

/**
 * The page of a run scan from rows ordered by run id then job id: every run of the page appears
 * at least once, so the rows give the count and the last id; items are the runs not terminal or
 * with a live job.
 */
export function runJobsPage(rows: readonly RunJobRow[], limit: number): AuditPage<RunJobs> {
  const runs = new Map<string, RunJobs>();
  for (const row of rows) {
    let run = runs.get(row.run_id);
    if (!run) runs.set(row.run_id, (run = { runId: row.run_id, pipeline: row.pipeline, status: row.status, currentStage: row.current_stage, jobs: [] }));
    if (row.job_id !== null) run.jobs.push({ id: row.job_id, stage: row.job_stage ?? '', kind: row.job_kind ?? 'stage', state: row.job_state ?? 'dead' });
  }
  const items = [...runs.values()].filter(
    (run) => !TERMINAL_RUN_STATUSES.includes(run.status) || run.jobs.some((job) => job.state !== 'dead'),
  );
  const last = rows.at(-1);
  return auditPage(items, runs.size, limit, last ? [last.run_id] : null);
}

/**
 * A row of the SQL stores' ledger scan: the page's run count and last run id on every row, with
 * one mismatch, or with NULLs when the page has none (then it is the only row).
 */
export interface LedgerMismatchRow {
  scanned: number;
  last_id: string | null;
  run_id: string | null;
  stage: string | null;
  kind: JobKind | null;
  problem: LedgerProblem | null;
  /** The ledger's key for `unexpected`; NULL for `missing` (the key is built here, by `core/keys.ts`). */
  key: string | null;
  stage_status: StageStatus | null;
  rollback_status: RollbackStatus | null;
}

/** The page of a ledger scan. */
export function ledgerMismatchPage(rows: readonly LedgerMismatchRow[], limit: number): AuditPage<LedgerMismatch> {
  const items = rows.flatMap((row): LedgerMismatch[] => {
    if (row.run_id === null || row.stage === null || row.kind === null || row.problem === null) return [];
    const key = row.key ?? jobIdempotencyKey(row.run_id, row.stage, row.kind);
    return [{ runId: row.run_id, stage: row.stage, kind: row.kind, problem: row.problem, key, stageStatus: row.stage_status, rollbackStatus: row.rollback_status }];
  });
  const first = rows[0];
  const scanned = Number(first?.scanned ?? 0);
  return auditPage(items, scanned, limit, first?.last_id ? [first.last_id] : null);
}
