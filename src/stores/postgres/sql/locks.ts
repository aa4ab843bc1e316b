/**
 * Statements of the `locks` sub-port: named locks (`locks`, migration 0011). Each export builds
 * one statement for a schema `s` (quoted); `$1` is "now" wherever time matters (NULL: the
 * database clock). Every statement is one transaction (autocommit); renewing and releasing are
 * fenced by the token in their WHERE clause, so a caller whose lock was taken over changes nothing.
 */
import { nowFrom, statement, type Statement } from '../database.ts';

/** "Now" in every statement that needs it: `$1`, or the database clock when `$1` is NULL. */
const NOW = nowFrom(1);

/** The columns callers see (a `LockRow`); never the token. */
const LOCK_COLUMNS = 'key, owner, fence, acquired_at, expires_at';

/**
 * In: now, key, owner, token, ttl ms. Out: one row: acquired, and the lock's columns after the
 * call (the caller's lock, or the live holder's). The `acquire_lock` function (routines/locks.sql)
 * decides under the row lock its upsert takes, so one caller at a time holds a key.
 */
export const acquireLock = (s: string): Statement =>
  statement(
    'acquire_lock',
    `SELECT a.acquired, (a.entry).key, (a.entry).owner, (a.entry).fence, (a.entry).acquired_at, (a.entry).expires_at
     FROM ${s}.acquire_lock($2, $3, $4, $5::bigint, $1::bigint) AS a`,
  );

/**
 * In: now, keys, tokens, ttls (ms). Out: one row per renewal, in input order: the new expiry when
 * the token held a live lock on the key (expires_at > now), else NULL (lost).
 */
export const renewLocks = (s: string): Statement =>
  statement(
    'renew_locks',
    `
WITH r AS (SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS r (key, token, ttl_ms, ord)),
renewed AS (
  UPDATE ${s}.locks l SET expires_at = ${NOW} + r.ttl_ms
  FROM r WHERE l.key = r.key AND l.token = r.token AND l.expires_at > ${NOW}
  RETURNING l.key, l.token, l.expires_at
)
SELECT x.expires_at FROM r LEFT JOIN renewed x ON x.key = r.key AND x.token = r.token ORDER BY r.ord`,
  );

/** In: key, token. Out: one row when `token` held the lock (expired but not taken over counts), now removed. */
export const releaseLock = (s: string): Statement =>
  statement('release_lock', `DELETE FROM ${s}.locks WHERE key = $1 AND token = $2 RETURNING 1`);

/** In: key. Out: the lock's row (no token), or nothing. */
export const getLock = (s: string): Statement => statement('get_lock', `SELECT ${LOCK_COLUMNS} FROM ${s}.locks WHERE key = $1`);

/** In: limit. Out: locks by key (byte order: the key is COLLATE "C"). */
export const listLocks = (s: string): Statement =>
  statement('list_locks', `SELECT ${LOCK_COLUMNS} FROM ${s}.locks ORDER BY key LIMIT $1`);

/** In: now. Out: one row: live and expired counts, and the oldest live lock's age in ms (NULL when none). */
export const lockStats = (s: string): Statement =>
  statement(
    'lock_stats',
    `SELECT count(*) FILTER (WHERE expires_at > ${NOW})::int AS held,
       count(*) FILTER (WHERE expires_at <= ${NOW})::int AS expired,
       ${NOW} - min(acquired_at) FILTER (WHERE expires_at > ${NOW}) AS oldest_held_age_ms
     FROM ${s}.locks`,
  );

/**
 * In: now. Out: how many expired locks were removed. A lock taken over meanwhile is rechecked on
 * its new version (and kept): READ COMMITTED re-evaluates the WHERE on the row it waited for.
 */
export const reapLocks = (s: string): Statement =>
  statement(
    'reap_locks',
    `
WITH gone AS (DELETE FROM ${s}.locks WHERE expires_at <= ${NOW} RETURNING 1)
SELECT count(*)::int AS reaped FROM gone`,
  );
