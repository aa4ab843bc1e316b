/**
 * The `audit` sub-port of the PostgreSQL store: paged read-only scans for `kiln verify`. Each page
 * is one statement (one snapshot, no lock); the statements are in sql/audit.ts, and rows become
 * pages as in every SQL store (`stores/shared/audit-pages.ts`).
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
  type CacheValueRow,
  type ExpiredLeaseRow,
  type LedgerMismatchRow,
  type RunJobRow,
} from '../shared/audit-pages.ts';
import type { PublicationRow } from '../shared/row-mapping.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';
import { publicationFromRow } from './rows.ts';

async function publications(ctx: PgContext, request: AuditPageRequest): Promise<AuditPage<Publication>> {
  const { auditPublicationsFirst, auditPublicationsNext } = ctx.sql.audit;
  const limit = pageLimit(request.limit);
  const after = decodeCursor(request.after, ['string', 'string'] as const);
  const rows =
    after === null
      ? await queryRows<PublicationRow>(ctx.pool, auditPublicationsFirst, [limit])
      : await queryRows<PublicationRow>(ctx.pool, auditPublicationsNext, [after[0], after[1], limit]);
  const last = rows.at(-1);
  return auditPage(rows.map(publicationFromRow), rows.length, limit, last ? [last.subject_id, last.profile] : null);
}

async function readyCacheEntries(ctx: PgContext, request: AuditPageRequest): Promise<AuditPage<AuditCacheEntry>> {
  const { auditReadyCacheFirst, auditReadyCacheNext } = ctx.sql.audit;
  const limit = pageLimit(request.limit);
  const after = decodeCursor(request.after, ['string', 'string'] as const);
  const rows =
    after === null
      ? await queryRows<CacheValueRow>(ctx.pool, auditReadyCacheFirst, [limit])
      : await queryRows<CacheValueRow>(ctx.pool, auditReadyCacheNext, [after[0], after[1], limit]);
  return cacheEntryPage(rows, limit);
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
