/**
 * The `audit` sub-port of the PostgreSQL store: paged read-only scans for `kiln verify`. Each page
 * is one statement (one snapshot, no lock); the statements are in sql/audit.ts, and rows become
 * pages as in every SQL store (`stores/shared/audit-pages.ts`).
 */
import type pg from 'pg';
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
  type CacheValueRow,
  type ExpiredLeaseRow,
  type LedgerMismatchRow,
  type RunJobRow,
} from '../shared/audit-pages.ts';
import type { PublicationRow } from '../shared/row-mapping.ts';
import type { PgContext } from './context.ts';
import { queryRows, type Statement } from './database.ts';
import { publicationFromRow } from './rows.ts';

/**
 * The rows of a page of a scan over a two-part key: the first page's statement takes the limit,
 * the next pages' the cursor's key and the limit.
 */
async function keyedRows<R extends pg.QueryResultRow>(ctx: PgContext, first: Statement, next: Statement, after: string | null | undefined, limit: number): Promise<R[]> {
  const key = decodeCursor(after, ['string', 'string'] as const);
  return key === null ? queryRows<R>(ctx.pool, first, [limit]) : queryRows<R>(ctx.pool, next, [key[0], key[1], limit]);
}

async function publications(ctx: PgContext, request: AuditPageRequest): Promise<AuditPage<Publication>> {
  const limit = pageLimit(request.limit);
  const { auditPublicationsFirst, auditPublicationsNext } = ctx.sql.audit;
  const rows = await keyedRows<PublicationRow>(ctx, auditPublicationsFirst, auditPublicationsNext, request.after, limit);
  const last = rows.at(-1);
  return auditPage(rows.map(publicationFromRow), rows.length, limit, last ? [last.subject_id, last.profile] : null);
}

async function readyCacheEntries(ctx: PgContext, request: AuditPageRequest): Promise<AuditPage<AuditCacheEntry>> {
  const limit = pageLimit(request.limit);
  const { auditReadyCacheFirst, auditReadyCacheNext } = ctx.sql.audit;
  return cacheEntryPage(await keyedRows<CacheValueRow>(ctx, auditReadyCacheFirst, auditReadyCacheNext, request.after, limit), limit);
}

async function expiredLeases(ctx: PgContext, query: AuditPageRequest & { graceMs: number }): Promise<AuditPage<ExpiredLease>> {
  const limit = pageLimit(query.limit);
  const [leaseUntil, id] = decodeCursor(query.after, ['number', 'string'] as const) ?? FIRST_LEASE_KEY;
  const rows = await queryRows<ExpiredLeaseRow>(ctx.pool, ctx.sql.audit.auditExpiredLeases, [ctx.now(), Math.floor(query.graceMs), leaseUntil, id, limit]);
  return expiredLeasePage(rows, limit);
}

async function runJobs(ctx: PgContext, request: AuditPageRequest): Promise<AuditPage<RunJobs>> {
  const limit = pageLimit(request.limit);
  const [after] = decodeCursor(request.after, ['string'] as const) ?? [''];
  return runJobsPage(await queryRows<RunJobRow>(ctx.pool, ctx.sql.audit.auditRunJobs, [after, limit]), limit);
}

async function ledgerMismatches(ctx: PgContext, request: AuditPageRequest): Promise<AuditPage<LedgerMismatch>> {
  const limit = pageLimit(request.limit);
  const [after] = decodeCursor(request.after, ['string'] as const) ?? [''];
  return ledgerMismatchPage(await queryRows<LedgerMismatchRow>(ctx.pool, ctx.sql.audit.auditLedgerMismatches, [after, limit]), limit);
}

/** The audit scans over the context's pool. */
export function createAuditPort(ctx: PgContext): AuditPort {
  return ctx.port<AuditPort>({
    publications: (request) => publications(ctx, request),
    readyCacheEntries: (request) => readyCacheEntries(ctx, request),
    expiredLeases: (query) => expiredLeases(ctx, query),
    runJobs: (request) => runJobs(ctx, request),
    ledgerMismatches: (request) => ledgerMismatches(ctx, request),
  });
}
