/**
 * The SQL of the `audit` sub-port: paged read-only scans for `kiln verify`. Each walks a primary
 * key or an existing index from a cursor (keyset paging: a page costs its own rows, however deep
 * the scan), so no migration adds anything for it. Scans of a composite key have a first-page
 * statement and a next-page one: the row-value comparison of the next page is what lets SQLite
 * seek into the key, and no sentinel sorts below every possible key.
 */
import type { PublicationRow } from '../../shared/row-mapping.ts';
import type { CacheValueRow, ExpiredLeaseRow, LedgerMismatchRow, RunJobRow } from '../../shared/audit-pages.ts';
import type { SqliteDatabase } from '../connection.ts';
import { currentStageOf } from './run-columns.ts';

/** In: limit. Out: the first publications by (subject_id, profile), walking the primary key. */
export const AUDIT_PUBLICATIONS_FIRST = 'SELECT * FROM publications ORDER BY subject_id, profile LIMIT @limit';

/** In: the last (subject_id, profile) read, limit. Out: the next publications in key order. */
export const AUDIT_PUBLICATIONS_NEXT = `
  SELECT * FROM publications WHERE (subject_id, profile) > (@subject_id, @profile)
  ORDER BY subject_id, profile LIMIT @limit`;

/** In: limit. Out: the first `ready` cache entries by (cache, key), value as JSON text, walking the primary key. */
export const AUDIT_READY_CACHE_FIRST = `
  SELECT cache, key, value FROM cache_entries WHERE status = 'ready' ORDER BY cache, key LIMIT @limit`;

/** In: the last (cache, key) read, limit. Out: the next `ready` cache entries in key order. */
export const AUDIT_READY_CACHE_NEXT = `
  SELECT cache, key, value FROM cache_entries WHERE status = 'ready' AND (cache, key) > (@cache, @key)
  ORDER BY cache, key LIMIT @limit`;

/**
 * In: now, cutoff (now - grace), the last (lease_until, id) read (or one below every key), limit.
 * Out: leased jobs whose lease ended before the cutoff, by (lease_until, id), walking
 * jobs_lease_expiry (0001), which holds leased jobs only and carries the key `id`.
 */
export const AUDIT_EXPIRED_LEASES = `
  SELECT id, run_id, queue, stage, kind, lease_owner, lease_until, @now - lease_until AS overdue_ms
  FROM jobs INDEXED BY jobs_lease_expiry
  WHERE state = 'leased' AND lease_until < @cutoff AND (lease_until, id) > (@lease_until, @id)
  ORDER BY lease_until, id LIMIT @limit`;

/** The runs of one page of a run scan: `limit` runs after the id `after` ('' before every id), by the primary key. */
const RUN_PAGE = 'SELECT id, pipeline, status, current_stage, updated_at FROM runs WHERE id > @after ORDER BY id LIMIT @limit';

/**
 * In: after, limit. Out: each run of the page (its current stage as read: run-columns.ts) with each
 * of its jobs (found through jobs_run_key, 0001), or once with NULL job columns when it has none;
 * by run id, then job id.
 */
export const AUDIT_RUN_JOBS = `
  WITH page AS (${RUN_PAGE})
  SELECT p.id AS run_id, p.pipeline, p.status, ${currentStageOf('p')} AS current_stage,
    j.id AS job_id, j.stage AS job_stage, j.kind AS job_kind, j.state AS job_state
  FROM page AS p LEFT JOIN jobs AS j ON j.run_id = p.id
  ORDER BY p.id, j.id`;

/**
 * In: after, limit. Out: the page's run count and last id on every row, with each disagreement
 * between the ledger and the stage records of its runs as read (stage_records_live, migration
 * 0015: a stage whose job is leased is running), a `stage` entry exactly for each succeeded
 * stage, a `rollback` entry exactly for each succeeded rollback, or one row of NULLs
 * when there is none. Stage records and ledger entries are found by their primary keys' leading
 * run_id; CROSS JOIN fixes the join order (SQLite never reorders it), so they are looked up for
 * the page's runs rather than scanned. `key` is the ledger's for `unexpected`, NULL for `missing`.
 */
export const AUDIT_LEDGER_MISMATCHES = `
  WITH page AS (${RUN_PAGE}),
  stats AS (SELECT count(*) AS scanned, max(id) AS last_id FROM page),
  expected AS (
    SELECT s.run_id, s.stage, 'stage' AS kind, s.status, s.rollback_status
    FROM page AS p CROSS JOIN stage_records_live AS s ON s.run_id = p.id WHERE s.status = 'succeeded'
    UNION ALL
    SELECT s.run_id, s.stage, 'rollback', s.status, s.rollback_status
    FROM page AS p CROSS JOIN stage_records_live AS s ON s.run_id = p.id WHERE s.rollback_status = 'succeeded'
  ),
  found AS (
    SELECT e.run_id, e.stage, e.kind, 'missing' AS problem, NULL AS key, e.status AS stage_status, e.rollback_status
    FROM expected AS e
    WHERE NOT EXISTS (SELECT 1 FROM ledger AS l WHERE l.run_id = e.run_id AND l.stage = e.stage AND l.kind = e.kind)
    UNION ALL
    SELECT l.run_id, l.stage, l.kind, 'unexpected', l.key, s.status, s.rollback_status
    FROM page AS p CROSS JOIN ledger AS l ON l.run_id = p.id
    LEFT JOIN stage_records_live AS s ON s.run_id = l.run_id AND s.stage = l.stage
    WHERE CASE l.kind WHEN 'stage' THEN s.status IS NOT 'succeeded' ELSE s.rollback_status IS NOT 'succeeded' END
  )
  SELECT st.scanned, st.last_id, f.run_id, f.stage, f.kind, f.problem, f.key, f.stage_status, f.rollback_status
  FROM stats AS st LEFT JOIN found AS f ON 1
  ORDER BY f.run_id, f.stage, f.kind`;

type Limit = { limit: number };

/** Prepares the statements of the audit scans; the schema must be migrated first. */
export function prepareAuditStatements(db: SqliteDatabase) {
  return {
    auditPublicationsFirst: db.prepare<Limit, PublicationRow>(AUDIT_PUBLICATIONS_FIRST),
    auditPublicationsNext: db.prepare<Limit & { subject_id: string; profile: string }, PublicationRow>(AUDIT_PUBLICATIONS_NEXT),
    auditReadyCacheFirst: db.prepare<Limit, CacheValueRow>(AUDIT_READY_CACHE_FIRST),
    auditReadyCacheNext: db.prepare<Limit & { cache: string; key: string }, CacheValueRow>(AUDIT_READY_CACHE_NEXT),
    auditExpiredLeases: db.prepare<Limit & { now: number; cutoff: number; lease_until: number; id: string }, ExpiredLeaseRow>(AUDIT_EXPIRED_LEASES),
    auditRunJobs: db.prepare<Limit & { after: string }, RunJobRow>(AUDIT_RUN_JOBS),
    auditLedgerMismatches: db.prepare<Limit & { after: string }, LedgerMismatchRow>(AUDIT_LEDGER_MISMATCHES),
  };
}
