/**
 * The `audit` sub-port of the SQLite store: paged read-only scans for `kiln verify`. Each page is
 * one deferred (read) transaction: one snapshot, no write lock, so an audit never holds up the
 * job path. The statements are in sql/audit.ts; rows become pages as in every SQL store
 * (`stores/shared/audit-pages.ts`).
 */
import type { AuditCacheEntry, AuditPage, AuditPageRequest, AuditPort, ExpiredLease, LedgerMismatch, RunJobs } from '../../core/ports/audit.ts';
import type { Publication } from '../../core/ports/publications.ts';
import {
  auditPage,
  cacheEntryPage,
  decodeCursor,
  expiredLeasePage,
  FIRST_LEASE_KEY,
  ledgerMismatchPage,
  pageLimit,
  runJobsPage,
} from '../shared/audit-pages.ts';
import type { SqliteContext } from './context.ts';
import { publicationFromRow } from './rows.ts';

function publications(ctx: SqliteContext, request: AuditPageRequest): AuditPage<Publication> {
  const sql = ctx.sql();
  const limit = pageLimit(request.limit);
  const after = decodeCursor(request.after, ['string', 'string'] as const);
  const rows = after === null ? sql.auditPublicationsFirst.all({ limit }) : sql.auditPublicationsNext.all({ limit, subject_id: after[0], profile: after[1] });
  const last = rows.at(-1);
  return auditPage(rows.map(publicationFromRow), rows.length, limit, last ? [last.subject_id, last.profile] : null);
}

function readyCacheEntries(ctx: SqliteContext, request: AuditPageRequest): AuditPage<AuditCacheEntry> {
  const sql = ctx.sql();
  const limit = pageLimit(request.limit);
  const after = decodeCursor(request.after, ['string', 'string'] as const);
  const rows = after === null ? sql.auditReadyCacheFirst.all({ limit }) : sql.auditReadyCacheNext.all({ limit, cache: after[0], key: after[1] });
  return cacheEntryPage(rows, limit);
}

function expiredLeases(ctx: SqliteContext, query: AuditPageRequest & { graceMs: number }): AuditPage<ExpiredLease> {
  const limit = pageLimit(query.limit);
  const [leaseUntil, id] = decodeCursor(query.after, ['number', 'string'] as const) ?? FIRST_LEASE_KEY;
  const now = ctx.clock.now();
  const rows = ctx.sql().auditExpiredLeases.all({ now, cutoff: now - query.graceMs, lease_until: leaseUntil, id, limit });
  return expiredLeasePage(rows, limit);
}

function runJobs(ctx: SqliteContext, request: AuditPageRequest): AuditPage<RunJobs> {
  const limit = pageLimit(request.limit);
  const [after] = decodeCursor(request.after, ['string'] as const) ?? [''];
  return runJobsPage(ctx.sql().auditRunJobs.all({ after, limit }), limit);
}

function ledgerMismatches(ctx: SqliteContext, request: AuditPageRequest): AuditPage<LedgerMismatch> {
  const limit = pageLimit(request.limit);
  const [after] = decodeCursor(request.after, ['string'] as const) ?? [''];
  return ledgerMismatchPage(ctx.sql().auditLedgerMismatches.all({ after, limit }), limit);
}

/** The audit scans over `ctx`. */
export function createAuditPort(ctx: SqliteContext): AuditPort {
  return {
    publications: ctx.read((request) => publications(ctx, request)),
    readyCacheEntries: ctx.read((request) => readyCacheEntries(ctx, request)),
    expiredLeases: ctx.read((query) => expiredLeases(ctx, query)),
    runJobs: ctx.read((request) => runJobs(ctx, request)),
    ledgerMismatches: ctx.read((request) => ledgerMismatches(ctx, request)),
  };
}
