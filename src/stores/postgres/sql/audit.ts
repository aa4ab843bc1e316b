/**
 * Statements of the `audit` sub-port: paged read-only scans for `kiln verify`, one statement per
 * page (one snapshot). Each walks a primary key or an existing index from a cursor (keyset
 * paging: a page costs its own rows, however deep the scan), so no migration adds anything for
 * it. Scans of a composite key have a first-page statement and a next-page one: a generic plan of
 * "no cursor OR after the cursor" could not seek into the key, and no sentinel sorts below every
 * possible key. Keys are COLLATE "C" (byte order, as in the other stores).
 */
import { nowFrom, statement, type Statement } from '../database.ts';

/** "Now" in the expired-lease scan: `$1`, or the database clock when `$1` is NULL. */
const NOW = nowFrom(1);

const PUBLICATION_COLUMNS = 'subject_id, profile, artifact_ref, subject_version, fence, updated_at';

/** In: limit. Out: the first publications by (subject_id, profile), walking the primary key. */
export const auditPublicationsFirst = (s: string): Statement =>
  statement('audit_publications_first', `SELECT ${PUBLICATION_COLUMNS} FROM ${s}.publications ORDER BY subject_id, profile LIMIT $1`);

/** In: the last (subject_id, profile) read, limit. Out: the next publications in key order. */
export const auditPublicationsNext = (s: string): Statement =>
  statement(
    'audit_publications_next',
    `SELECT ${PUBLICATION_COLUMNS} FROM ${s}.publications WHERE (subject_id, profile) > ($1, $2)
     ORDER BY subject_id, profile LIMIT $3`,
  );

/** In: limit. Out: the first `ready` cache entries by (cache, key), value as JSON text (as written), walking the primary key. */
export const auditReadyCacheFirst = (s: string): Statement =>
  statement(
    'audit_ready_cache_first',
    `SELECT cache, key, value::text AS value FROM ${s}.cache_entries WHERE status = 'ready' ORDER BY cache, key LIMIT $1`,
  );

/** In: the last (cache, key) read, limit. Out: the next `ready` cache entries in key order. */
export const auditReadyCacheNext = (s: string): Statement =>
  statement(
    'audit_ready_cache_next',
    `SELECT cache, key, value::text AS value FROM ${s}.cache_entries WHERE status = 'ready' AND (cache, key) > ($1, $2)
     ORDER BY cache, key LIMIT $3`,
  );

/**
 * In: now, grace (ms), the last (lease_until, id) read (or one below every key), limit. Out: leased
 * jobs whose lease ended more than the grace ago, by (lease_until, id), walking jobs_lease_expiry
 * (leased jobs only); `lease_until >= $3` gives the walk its start, the row comparison the rest.
 */
export const auditExpiredLeases = (s: string): Statement =>
  statement(
    'audit_expired_leases',
    `SELECT id, run_id, queue, stage, kind, lease_owner, lease_until, ${NOW} - lease_until AS overdue_ms
     FROM ${s}.jobs
     WHERE state = 'leased' AND lease_until < ${NOW} - $2::bigint
       AND lease_until >= $3::bigint AND (lease_until, id) > ($3::bigint, $4::text)
     ORDER BY lease_until, id LIMIT $5`,
  );

/** The runs of one page of a run scan: `$2` runs after the id `$1` ('' before every id), by the primary key. */
const runPage = (s: string): string => `SELECT id, pipeline, status, current_stage FROM ${s}.runs WHERE id > $1 ORDER BY id LIMIT $2`;

/**
 * In: after, limit. Out: each run of the page with each of its jobs (found through jobs_run), or
 * once with NULL job columns when it has none; by run id, then job id.
 */
export const auditRunJobs = (s: string): Statement =>
  statement(
    'audit_run_jobs',
    `WITH page AS (${runPage(s)})
     SELECT p.id AS run_id, p.pipeline, p.status, p.current_stage,
       j.id AS job_id, j.stage AS job_stage, j.kind AS job_kind, j.state AS job_state
     FROM page AS p LEFT JOIN ${s}.jobs AS j ON j.run_id = p.id
     ORDER BY p.id, j.id`,
  );

/**
 * In: after, limit. Out: the page's run count and last id on every row, with each disagreement
 * between the ledger and the stage records of its runs as read (stage_records_live, migration
 * 0020: a stage whose job is leased is running), a `stage` entry exactly for each succeeded
 * stage, a `rollback` entry exactly for each succeeded rollback, or one row of NULLs
 * when there is none. Stage records and ledger entries are found by their primary keys' leading
 * run_id. `key` is the ledger's for `unexpected`, NULL for `missing`.
 */
export const auditLedgerMismatches = (s: string): Statement =>
  statement(
    'audit_ledger_mismatches',
    `WITH page AS (${runPage(s)}),
     stats AS (SELECT count(*)::int AS scanned, max(id) AS last_id FROM page),
     expected AS (
       SELECT st.run_id, st.stage, 'stage'::text AS kind, st.status, st.rollback_status
       FROM page AS p JOIN ${s}.stage_records_live AS st ON st.run_id = p.id WHERE st.status = 'succeeded'
       UNION ALL
       SELECT st.run_id, st.stage, 'rollback', st.status, st.rollback_status
       FROM page AS p JOIN ${s}.stage_records_live AS st ON st.run_id = p.id WHERE st.rollback_status = 'succeeded'
     ),
     found AS (
       SELECT e.run_id, e.stage, e.kind, 'missing'::text AS problem, NULL::text AS key, e.status AS stage_status, e.rollback_status
       FROM expected AS e
       WHERE NOT EXISTS (SELECT 1 FROM ${s}.ledger AS l WHERE l.run_id = e.run_id AND l.stage = e.stage AND l.kind = e.kind)
       UNION ALL
       SELECT l.run_id, l.stage, l.kind, 'unexpected', l.key, st.status, st.rollback_status
       FROM page AS p JOIN ${s}.ledger AS l ON l.run_id = p.id
       LEFT JOIN ${s}.stage_records_live AS st ON st.run_id = l.run_id AND st.stage = l.stage
       WHERE CASE l.kind WHEN 'stage' THEN st.status IS DISTINCT FROM 'succeeded'
                         ELSE st.rollback_status IS DISTINCT FROM 'succeeded' END
     )
     SELECT stats.scanned, stats.last_id, f.run_id, f.stage, f.kind, f.problem, f.key, f.stage_status, f.rollback_status
     FROM stats LEFT JOIN found AS f ON true
     ORDER BY f.run_id, f.stage COLLATE "C", f.kind COLLATE "C"`,
  );
