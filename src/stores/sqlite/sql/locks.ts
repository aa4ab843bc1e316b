/**
 * The SQL of the `locks` sub-port (`locks`, migration 0006). Every statement runs inside the
 * caller's transaction: acquire, renew, release and reap in BEGIN IMMEDIATE (the database write
 * lock), so a read of a lock cannot go stale before the write that depends on it.
 */
import type { LockRow } from '../../shared/row-mapping.ts';
import type { SqliteDatabase } from '../connection.ts';

/** The columns callers see (a `LockRow`), in table order; never the token. */
const LOCK_COLUMNS = 'key, owner, fence, acquired_at, expires_at';

/** In: key. Out: the lock's row with its token, or nothing. */
export const SELECT_LOCK_WITH_TOKEN = `SELECT ${LOCK_COLUMNS}, token FROM locks WHERE key = ?`;

/** In: key. Out: the lock's row (no token), or nothing. */
export const SELECT_LOCK = `SELECT ${LOCK_COLUMNS} FROM locks WHERE key = ?`;

/**
 * In: the whole row of a new holder (its fence just taken from fence_counter). Replaces whatever
 * lock the key had: the caller has checked, in the same transaction, that it was free or expired.
 */
export const PUT_LOCK = `
  INSERT INTO locks (key, owner, token, fence, acquired_at, expires_at)
  VALUES (@key, @owner, @token, @fence, @acquired_at, @expires_at)
  ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, token = excluded.token, fence = excluded.fence,
    acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`;

/**
 * In: key, token, new expiry, now. Changes one row when `token` holds a live lock on `key`
 * (expires_at > now, the rule of every lease), now held until the new expiry.
 */
export const RENEW_LOCK = `
  UPDATE locks SET expires_at = @expires_at WHERE key = @key AND token = @token AND expires_at > @now`;

/** In: key, token, new expiry. Extends the lock `token` holds, live or not (a repeated acquire). */
export const EXTEND_OWN_LOCK = 'UPDATE locks SET expires_at = @expires_at WHERE key = @key AND token = @token';

/** In: key, token. Removes the lock when `token` holds it (expired but not taken over counts). */
export const DELETE_OWN_LOCK = 'DELETE FROM locks WHERE key = ? AND token = ?';

/** In: limit. Out: locks by key (byte order: BINARY collation). */
export const LIST_LOCKS = `SELECT ${LOCK_COLUMNS} FROM locks ORDER BY key LIMIT ?`;

/** In: now. Out: live and expired counts, and the earliest acquired_at of a live lock (or NULL). */
export const LOCK_STATS = `
  SELECT count(*) FILTER (WHERE expires_at > @now) AS held,
    count(*) FILTER (WHERE expires_at <= @now) AS expired,
    min(acquired_at) FILTER (WHERE expires_at > @now) AS oldest_acquired_at
  FROM locks`;

/** In: now. Removes every expired lock (walks locks_expiry). */
export const REAP_LOCKS = 'DELETE FROM locks WHERE expires_at <= ?';

/** A `locks` row with its token. */
export interface StoredLockRow extends LockRow {
  token: string;
}

/** Prepares the statements of locks; the schema must be migrated first. */
export function prepareLocksStatements(db: SqliteDatabase) {
  return {
    selectLockWithToken: db.prepare<[key: string], StoredLockRow>(SELECT_LOCK_WITH_TOKEN),
    selectLock: db.prepare<[key: string], LockRow>(SELECT_LOCK),
    putLock: db.prepare<StoredLockRow>(PUT_LOCK),
    renewLock: db.prepare<{ key: string; token: string; expires_at: number; now: number }>(RENEW_LOCK),
    extendOwnLock: db.prepare<{ key: string; token: string; expires_at: number }>(EXTEND_OWN_LOCK),
    deleteOwnLock: db.prepare<[key: string, token: string]>(DELETE_OWN_LOCK),
    listLocks: db.prepare<[limit: number], LockRow>(LIST_LOCKS),
    lockStats: db.prepare<{ now: number }, { held: number; expired: number; oldest_acquired_at: number | null }>(LOCK_STATS),
    reapLocks: db.prepare<[now: number]>(REAP_LOCKS),
  };
}
