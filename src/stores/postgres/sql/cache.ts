/**
 * Statements of the `cache` sub-port: the single-flight cache (`cache_entries`). Each export
 * builds one statement for a schema `s` (quoted); `$1` is always "now" (NULL: the database
 * clock). Every statement is one transaction (autocommit); ending, renewing or releasing a build
 * is fenced by the builder token in its WHERE clause, so a caller whose build was taken over
 * changes nothing.
 */
import { nowFrom, statement, type ListingText, type Statement } from '../database.ts';

/** "Now" in every statement that needs it: `$1`, or the database clock when `$1` is NULL. */
const NOW = nowFrom(1);

/** The columns of a `CacheEntryRow`, in table order (not `purge_at`). */
const ENTRY_COLUMNS =
  'cache, key, status, value, error, builder_owner, builder_token, builder_fence, builder_until, expires_at, stale_until, updated_at';

/** Clears the builder lease (the four columns are set and cleared together). */
const CLEAR_BUILDER = 'builder_owner = NULL, builder_token = NULL, builder_fence = NULL, builder_until = NULL';

/**
 * In: now, cache, key, owner, token, lease ms. Out: one row: state, revalidate, and the entry's
 * columns after the call. The `acquire_cache_entry` function (routines/cache.sql) reads without a lock when
 * nothing is to be taken, else decides again under the row lock (or by the insert race), so one
 * caller at a time holds the builder lease.
 */
export const acquireCacheEntry = (s: string): Statement =>
  statement(
    'acquire_cache_entry',
    `SELECT c.state, c.revalidate, (c.entry).*
     FROM ${s}.acquire_cache_entry($2, $3, $4, $5, $6::bigint, $1::bigint) AS c`,
  );

/** Entries matching the filters (status, cache), by cache then key (the primary key's order). */
export const listCacheEntries =
  (s: string): ListingText =>
  (where, limitParam) =>
    `SELECT ${ENTRY_COLUMNS} FROM ${s}.cache_entries ${where} ORDER BY cache, key LIMIT $${limitParam}`;

/** In: cache, key. Out: the entry's row or nothing. */
export const getCacheEntry = (s: string): Statement =>
  statement('get_cache_entry', `SELECT ${ENTRY_COLUMNS} FROM ${s}.cache_entries WHERE cache = $1 AND key = $2`);

/**
 * In: now, cache, key, token, value JSON, ttl ms, stale ms. Out: one row when `token` is the
 * builder token, whatever its lease end (nobody took it over): the entry becomes `ready` with
 * the value, fresh for ttl, servable stale for `stale ms` more (0: never), and no builder.
 */
export const completeCacheEntry = (s: string): Statement =>
  statement(
    'complete_cache_entry',
    `UPDATE ${s}.cache_entries SET status = 'ready', value = $5::json, error = NULL, ${CLEAR_BUILDER},
       expires_at = ${NOW} + $6::bigint,
       stale_until = CASE WHEN $7::bigint > 0 THEN ${NOW} + $6::bigint + $7::bigint END,
       updated_at = ${NOW}
     WHERE cache = $2 AND key = $3 AND builder_token = $4
     RETURNING 1`,
  );

/**
 * In: now, cache, key, token, error JSON, ttl ms. Out: one row when `token` is the builder token:
 * the entry becomes a negative (`failed`) entry for ttl, with no value and no builder.
 */
export const failCacheEntry = (s: string): Statement =>
  statement(
    'fail_cache_entry',
    `UPDATE ${s}.cache_entries SET status = 'failed', value = NULL, error = $5::json, ${CLEAR_BUILDER},
       expires_at = ${NOW} + $6::bigint, stale_until = NULL, updated_at = ${NOW}
     WHERE cache = $2 AND key = $3 AND builder_token = $4
     RETURNING 1`,
  );

/**
 * In: now, cache, key, token. Out: one row with `released` = 1 when `token` was the builder
 * token (a transient failure): a `building` entry is removed (the next caller builds), a
 * revalidating `ready` entry keeps its old value without a builder; 0 otherwise. The two
 * statements exclude each other by status, so at most one of them touches the row.
 */
export const releaseCacheEntry = (s: string): Statement =>
  statement(
    'release_cache_entry',
    `
WITH removed AS (
  DELETE FROM ${s}.cache_entries WHERE cache = $2 AND key = $3 AND builder_token = $4 AND status = 'building'
  RETURNING 1
),
released AS (
  UPDATE ${s}.cache_entries SET ${CLEAR_BUILDER}, updated_at = ${NOW}
  WHERE cache = $2 AND key = $3 AND builder_token = $4 AND status <> 'building'
  RETURNING 1
)
SELECT ((SELECT count(*) FROM removed) + (SELECT count(*) FROM released))::int AS released`,
  );

/**
 * In: now, cache, key, token, lease ms. Out: one row when `token` still holds a live builder
 * lease (the rule of job leases: an expired lease is no longer held), now extended to now + lease.
 */
export const renewCacheLease = (s: string): Statement =>
  statement(
    'renew_cache_lease',
    `UPDATE ${s}.cache_entries SET builder_until = ${NOW} + $5::bigint, updated_at = ${NOW}
     WHERE cache = $2 AND key = $3 AND builder_token = $4 AND builder_until > ${NOW}
     RETURNING 1`,
  );

/**
 * In: now, grace ms (>= 0). Out: how many entries were deleted: every entry that can no longer be
 * served and has no live builder (purge_at <= now, walked on cache_entries_purge), except
 * `building` entries whose builder lease expired grace ms ago or less (the builder may still
 * complete). A row being written meanwhile is rechecked on its new version.
 */
export const deleteExpiredCacheEntries = (s: string): Statement =>
  statement(
    'delete_expired_cache_entries',
    `
WITH gone AS (
  DELETE FROM ${s}.cache_entries
  WHERE purge_at <= ${NOW} AND (status <> 'building' OR purge_at < ${NOW} - $2::bigint)
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM gone`,
  );
