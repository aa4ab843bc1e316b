/**
 * The `audit` sub-port of the memory store: paged read-only scans for `kiln verify`. Each page is
 * one synchronous read of the state; rows are taken in key order after the cursor, as the SQL
 * stores walk their keys.
 */
import { jobIdempotencyKey } from '../../core/keys.ts';
import { JobKind, JobState, RollbackStatus, StageStatus } from '../../core/model.ts';
import type { LedgerEntry, Run, StageRecord } from '../../core/model.ts';
import type { AuditCacheEntry, AuditPage, AuditPageRequest, AuditPort, ExpiredLease, LedgerMismatch, RunJobs } from '../../core/ports/audit.ts';
import { LedgerProblem } from '../../core/ports/audit.ts';
import type { Publication } from '../../core/ports/publications.ts';
import { auditPage, cacheEntryPage, decodeCursor, expiredLeasePage, pageLimit, runJobsPage, type ExpiredLeaseRow, type RunJobRow } from '../shared/audit-pages.ts';
import type { MemoryContext } from './context.ts';
import type { MemoryState } from './state.ts';

type Key = readonly (string | number)[];

/** Compares two keys part by part (strings by code unit, numbers numerically). */
function compareKeys(a: Key, b: Key): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as string | number;
    const y = b[i] as string | number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** The first `limit` rows (by `keyOf`) after `after`, with the last row's key. */
function rowsAfter<T>(rows: Iterable<T>, keyOf: (row: T) => Key, after: Key | null, limit: number): { rows: T[]; lastKey: Key | null } {
  const keyed = [...rows].map((row) => ({ row, key: keyOf(row) })).filter(({ key }) => after === null || compareKeys(key, after) > 0);
  const page = keyed.sort((a, b) => compareKeys(a.key, b.key)).slice(0, limit);
  return { rows: page.map(({ row }) => row), lastKey: page.at(-1)?.key ?? null };
}

/** Runs a paged scan: the rows after the cursor, mapped to items by `itemsOf`. */
function scan<T, Item>(
  request: AuditPageRequest,
  kinds: readonly ('string' | 'number')[],
  rows: Iterable<T>,
  keyOf: (row: T) => Key,
  itemsOf: (rows: T[]) => Item[],
): AuditPage<Item> {
  const limit = pageLimit(request.limit);
  const page = rowsAfter(rows, keyOf, decodeCursor(request.after, kinds), limit);
  return auditPage(itemsOf(page.rows), page.rows.length, limit, page.lastKey);
}

function readyCacheEntries(state: MemoryState, request: AuditPageRequest): AuditPage<AuditCacheEntry> {
  const limit = pageLimit(request.limit);
  const ready = [...state.cacheEntries.values()].filter((entry) => entry.status === 'ready');
  const page = rowsAfter(ready, (e) => [e.cache, e.key], decodeCursor(request.after, ['string', 'string']), limit);
  return cacheEntryPage(page.rows.map((e) => ({ cache: e.cache, key: e.key, value: JSON.stringify(e.value) })), limit);
}

function expiredLeases(state: MemoryState, query: AuditPageRequest & { graceMs: number }): AuditPage<ExpiredLease> {
  const now = state.clock.now();
  const limit = pageLimit(query.limit);
  const expired = [...state.jobs.values()].filter((job) => job.state === JobState.leased && (job.leaseUntil ?? now) < now - query.graceMs);
  const page = rowsAfter(expired, (job) => [job.leaseUntil ?? 0, job.id], decodeCursor(query.after, ['number', 'string']), limit);
  const rows = page.rows.map((job): ExpiredLeaseRow => {
    const leaseUntil = job.leaseUntil ?? 0;
    return { id: job.id, run_id: job.runId, queue: job.queue, stage: job.stage, kind: job.kind, lease_owner: job.leaseOwner, lease_until: leaseUntil, overdue_ms: now - leaseUntil };
  });
  return expiredLeasePage(rows, limit);
}

/** `items` grouped by run id, for the runs of one page only (one pass over `items`). */
function byRun<T extends { runId: string }>(items: Iterable<T>, runs: readonly Run[]): Map<string, T[]> {
  const grouped = new Map<string, T[]>(runs.map((run) => [run.id, []]));
  for (const item of items) grouped.get(item.runId)?.push(item);
  return grouped;
}

/** The runs after the cursor with all their jobs, as the SQL stores' run scan returns them. */
function runJobs(state: MemoryState, request: AuditPageRequest): AuditPage<RunJobs> {
  const limit = pageLimit(request.limit);
  const { rows: runs } = rowsAfter(state.runs.values(), (run) => [run.id], decodeCursor(request.after, ['string']), limit);
  const jobsByRun = byRun(state.jobs.values(), runs);
  const rows = runs.flatMap((run): RunJobRow[] => {
    const base = { run_id: run.id, pipeline: run.pipeline, status: run.status, current_stage: run.currentStage };
    const jobs = (jobsByRun.get(run.id) ?? []).sort((a, b) => compareKeys([a.id], [b.id]));
    if (jobs.length === 0) return [{ ...base, job_id: null, job_stage: null, job_kind: null, job_state: null }];
    return jobs.map((job) => ({ ...base, job_id: job.id, job_stage: job.stage, job_kind: job.kind, job_state: job.state }));
  });
  return runJobsPage(rows, limit);
}

/** Whether the stage (kind `stage`) or its rollback (kind `rollback`) succeeded: exactly when a ledger entry must exist. */
function succeeded(record: StageRecord | undefined, kind: JobKind): boolean {
  return kind === JobKind.stage ? record?.status === StageStatus.succeeded : record?.rollbackStatus === RollbackStatus.succeeded;
}

/** Ledger/stage disagreements of one run (see `AuditPort.ledgerMismatches`). */
function ledgerMismatchesOfRun(state: MemoryState, runId: string, entries: readonly LedgerEntry[]): LedgerMismatch[] {
  const records = new Map((state.stages.get(runId) ?? []).map((record) => [record.stage, record]));
  const mismatch = (stage: string, kind: JobKind, problem: LedgerProblem, key: string): LedgerMismatch => {
    const record = records.get(stage);
    return { runId, stage, kind, problem, key, stageStatus: record?.status ?? null, rollbackStatus: record?.rollbackStatus ?? null };
  };
  const found: LedgerMismatch[] = [];
  const recorded = new Set<string>();
  for (const entry of entries) {
    recorded.add(`${entry.stage}\0${entry.kind}`);
    if (!succeeded(records.get(entry.stage), entry.kind)) found.push(mismatch(entry.stage, entry.kind, LedgerProblem.unexpected, entry.key));
  }
  for (const record of records.values()) {
    for (const kind of [JobKind.stage, JobKind.rollback]) {
      if (succeeded(record, kind) && !recorded.has(`${record.stage}\0${kind}`)) {
        found.push(mismatch(record.stage, kind, LedgerProblem.missing, jobIdempotencyKey(runId, record.stage, kind)));
      }
    }
  }
  return found.sort((a, b) => compareKeys([a.stage, a.kind], [b.stage, b.kind]));
}

/** Ledger/stage disagreements of the runs of a page. */
function ledgerMismatchesOf(state: MemoryState, runs: readonly Run[]): LedgerMismatch[] {
  const entriesByRun = byRun(state.ledger.values(), runs);
  return runs.flatMap((run) => ledgerMismatchesOfRun(state, run.id, entriesByRun.get(run.id) ?? []));
}

/** Paged read-only scans of the state. */
export function createAuditPort(ctx: MemoryContext): AuditPort {
  const { state } = ctx;
  const runKey = (run: Run): Key => [run.id];
  return {
    publications: ctx.atomic((request: AuditPageRequest) =>
      scan(request, ['string', 'string'], state.publications.values(), (p: Publication) => [p.subjectId, p.profile], (rows) => rows),
    ),
    readyCacheEntries: ctx.atomic((request: AuditPageRequest) => readyCacheEntries(state, request)),
    expiredLeases: ctx.atomic((query: AuditPageRequest & { graceMs: number }) => expiredLeases(state, query)),
    runJobs: ctx.atomic((request: AuditPageRequest) => runJobs(state, request)),
    ledgerMismatches: ctx.atomic((request: AuditPageRequest) =>
      scan(request, ['string'], state.runs.values(), runKey, (runs) => ledgerMismatchesOf(state, runs)),
    ),
  };
}
