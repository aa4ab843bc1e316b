/**
 * The `audit` sub-port of the Redis store: paged read-only scans for `kiln verify`. Each page is
 * one script (routines/audit-*.lua, one consistent read); cursors and pages are those every store
 * shares (stores/shared/audit-pages.ts), so a cursor means the same thing on every store.
 */
import type { JobKind, JobState, RunStatus } from '../../core/model.ts';
import type { AuditCacheEntry, AuditPage, AuditPageRequest, AuditPort, ExpiredLease, LedgerMismatch, RunJobs } from '../../core/ports/audit.ts';
import type { Publication } from '../../core/ports/publications.ts';
import { auditPage, cacheEntryPage, decodeCursor, expiredLeasePage, pageLimit, runJobsPage, type CacheValueRow, type RunJobRow } from '../shared/audit-pages.ts';
import { ledgerMismatchesOfRun, type RunLedgerRead } from './audit/ledger.ts';
import type { RedisContext } from './context.ts';
import { listOf } from './rows.ts';

type List<T> = T[] | Record<string, never>;

/** A publication as stored in its subject's hash (lib-keys.lua: numbers as text). */
interface StoredPublication {
  artifactRef: string;
  subjectVersion: string | number;
  fence: string | number;
  updatedAt: string | number;
}

async function publications(ctx: RedisContext, request: AuditPageRequest): Promise<AuditPage<Publication>> {
  const limit = pageLimit(request.limit);
  const [subject, profile] = decodeCursor(request.after, ['string', 'string'] as const) ?? ['', ''];
  const args = [request.after === null || request.after === undefined ? '' : subject, profile, limit];
  const rows = listOf(await ctx.call<List<[string, string, string]>>('audit-publications', args));
  const items = rows.map(([subjectId, profileName, text]): Publication => {
    const stored = JSON.parse(text) as StoredPublication;
    return {
      subjectId,
      profile: profileName,
      artifactRef: stored.artifactRef,
      subjectVersion: Number(stored.subjectVersion),
      fence: Number(stored.fence),
      updatedAt: Number(stored.updatedAt),
    };
  });
  const last = items.at(-1);
  return auditPage(items, items.length, limit, last ? [last.subjectId, last.profile] : null);
}

async function readyCacheEntries(ctx: RedisContext, request: AuditPageRequest): Promise<AuditPage<AuditCacheEntry>> {
  const limit = pageLimit(request.limit);
  const [cache, key] = decodeCursor(request.after, ['string', 'string'] as const) ?? ['', ''];
  const args = [request.after === null || request.after === undefined ? '' : cache, key, limit];
  const rows = listOf(await ctx.call<List<[string, string, string]>>('audit-ready-cache-entries', args));
  return cacheEntryPage(
    rows.map(([cacheName, entryKey, value]): CacheValueRow => ({ cache: cacheName, key: entryKey, value })),
    limit,
  );
}

/** A row of audit-expired-leases.lua. */
interface LeaseRow {
  id: string;
  runId: string;
  queue: string;
  stage: string;
  kind: JobKind;
  leaseOwner?: string;
  leaseUntil: string;
}

async function expiredLeases(ctx: RedisContext, query: AuditPageRequest & { graceMs: number }): Promise<AuditPage<ExpiredLease>> {
  const limit = pageLimit(query.limit);
  const after = decodeCursor(query.after, ['number', 'string'] as const);
  const args = [Math.floor(query.graceMs), after === null ? '' : after[0], after === null ? '' : after[1], limit];
  const { now, rows } = await ctx.call<{ now: string; rows: List<LeaseRow> }>('audit-expired-leases', args);
  return expiredLeasePage(
    listOf(rows).map((row) => ({
      id: row.id,
      run_id: row.runId,
      queue: row.queue,
      stage: row.stage,
      kind: row.kind,
      lease_owner: row.leaseOwner ?? null,
      lease_until: Number(row.leaseUntil),
      overdue_ms: Number(now) - Number(row.leaseUntil),
    })),
    limit,
  );
}

/** A run of audit-run-jobs.lua with its jobs as [id, stage, kind, state]. */
interface RunJobsRead {
  id: string;
  pipeline: string;
  status: RunStatus;
  currentStage?: string;
  jobs: List<[string, string, JobKind, JobState]>;
}

async function runJobs(ctx: RedisContext, request: AuditPageRequest): Promise<AuditPage<RunJobs>> {
  const limit = pageLimit(request.limit);
  const [after] = decodeCursor(request.after, ['string'] as const) ?? [''];
  const runs = listOf(await ctx.call<List<RunJobsRead>>('audit-run-jobs', [after, limit]));
  const rows = runs.flatMap((run): RunJobRow[] => {
    const base = { run_id: run.id, pipeline: run.pipeline, status: run.status, current_stage: run.currentStage ?? null };
    const jobs = listOf(run.jobs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (jobs.length === 0) return [{ ...base, job_id: null, job_stage: null, job_kind: null, job_state: null }];
    return jobs.map(([id, stage, kind, state]) => ({ ...base, job_id: id, job_stage: stage, job_kind: kind, job_state: state }));
  });
  return runJobsPage(rows, limit);
}

async function ledgerMismatches(ctx: RedisContext, request: AuditPageRequest): Promise<AuditPage<LedgerMismatch>> {
  const limit = pageLimit(request.limit);
  const [after] = decodeCursor(request.after, ['string'] as const) ?? [''];
  const runs = listOf(await ctx.call<List<RunLedgerRead>>('audit-ledger-mismatches', [after, limit]));
  const last = runs.at(-1);
  return auditPage(runs.flatMap(ledgerMismatchesOfRun), runs.length, limit, last ? [last.id] : null);
}

/** The paged scans of the store. */
export function createAuditPort(ctx: RedisContext): AuditPort {
  return ctx.port<AuditPort>({
    publications: (request) => publications(ctx, request),
    readyCacheEntries: (request) => readyCacheEntries(ctx, request),
    expiredLeases: (query) => expiredLeases(ctx, query),
    runJobs: (request) => runJobs(ctx, request),
    ledgerMismatches: (request) => ledgerMismatches(ctx, request),
  });
}
