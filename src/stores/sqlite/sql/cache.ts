/**
 * The SQL of the `cache` sub-port: the single-flight cache (`cache_entries`, migration 0003).
 * Each header says what goes in, what comes out and the invariant it keeps. Every write runs
 * inside a BEGIN IMMEDIATE transaction, so a read and the write that depends on it see the same
 * row in every process.
 */
import type { SqliteDatabase } from '../connection.ts';
import type { CacheEntryRow } from '../rows.ts';

/** The stored columns of `cache_entries`, in the order `CacheEntryRow` declares them (not `purge_at`). */
const CACHE_ENTRY_COLUMNS =
  'cache, key, status, value, error, builder_owner, builder_token, builder_fence, builder_until, expires_at, stale_until, updated_at';

/** In: cache, key. Out: the entry's row or nothing. */
export const SELECT_CACHE_ENTRY = `SELECT ${CACHE_ENTRY_COLUMNS} FROM cache_entries WHERE cache = ? AND key = ?`;

/**
 * In: every stored column, as the acquiring caller computed them from the row it read in the same
 * transaction (or from nothing). Writes the whole row: a new builder, a builder taking over, or a
 * revalidation of a stale value. The general write of `acquire`.
 */
/**
 * In: optional status and cache (NULL = any), limit. Out: entries by cache then key (the primary
 * key's order). A scan filtered row by row: an operator read (building entries), not a hot path.
 */
export const LIST_CACHE_ENTRIES = `
  SELECT ${CACHE_ENTRY_COLUMNS} FROM cache_entries
  WHERE (@status IS NULL OR status = @status) AND (@cache IS NULL OR cache = @cache)
  ORDER BY cache, key LIMIT @limit`;

export const UPSERT_CACHE_ENTRY = `
  INSERT INTO cache_entries (${CACHE_ENTRY_COLUMNS})
  VALUES (@cache, @key, @status, @value, @error, @builder_owner, @builder_token, @builder_fence, @builder_until,
    @expires_at, @stale_until, @updated_at)
  ON CONFLICT (cache, key) DO UPDATE SET status = excluded.status, value = excluded.value, error = excluded.error,
    builder_owner = excluded.builder_owner, builder_token = excluded.builder_token,
    builder_fence = excluded.builder_fence, builder_until = excluded.builder_until,
    expires_at = excluded.expires_at, stale_until = excluded.stale_until, updated_at = excluded.updated_at`;

/**
 * In: cache, key, token, value, expiry, stale end (NULL = never stale), now. Changes one row when
 * `token` is the entry's builder token, whatever its lease end (nobody took it over): the entry
 * becomes `ready` with the value and no builder.
 */
export const COMPLETE_CACHE_ENTRY = `
  UPDATE cache_entries SET status = 'ready', value = @value, error = NULL,
    builder_owner = NULL, builder_token = NULL, builder_fence = NULL, builder_until = NULL,
    expires_at = @expires_at, stale_until = @stale_until, updated_at = @now
  WHERE cache = @cache AND key = @key AND builder_token = @token`;

/**
 * In: cache, key, token, error, expiry, now. Changes one row when `token` is the builder token:
 * the entry becomes a negative (`failed`) entry with no value and no builder.
 */
export const FAIL_CACHE_ENTRY = `
  UPDATE cache_entries SET status = 'failed', value = NULL, error = @error,
    builder_owner = NULL, builder_token = NULL, builder_fence = NULL, builder_until = NULL,
    expires_at = @expires_at, stale_until = NULL, updated_at = @now
  WHERE cache = @cache AND key = @key AND builder_token = @token`;

/**
 * In: cache, key, token. Removes a `building` entry whose builder token is `token` (a transient
 * failure: nothing was built, the next caller builds).
 */
export const DELETE_BUILDING_CACHE_ENTRY = `
  DELETE FROM cache_entries WHERE cache = ? AND key = ? AND builder_token = ? AND status = 'building'`;

/**
 * In: now, cache, key, token. Ends the revalidation of a `ready` entry held by `token` without a
 * new value (a transient failure): the builder lease is cleared and the old value stays.
 */
export const RELEASE_REVALIDATION = `
  UPDATE cache_entries SET builder_owner = NULL, builder_token = NULL, builder_fence = NULL, builder_until = NULL,
    updated_at = ?
  WHERE cache = ? AND key = ? AND builder_token = ? AND status = 'ready'`;

/**
 * In: cache, key, token, new lease end, now. Changes one row when `token` still holds a live
 * builder lease (same rule as job leases: an expired lease is no longer held).
 */
export const RENEW_CACHE_LEASE = `
  UPDATE cache_entries SET builder_until = @builder_until, updated_at = @now
  WHERE cache = @cache AND key = @key AND builder_token = @token AND builder_until > @now`;

/**
 * In: now, grace. Deletes every entry that can no longer be served and has no live builder
 * (purge_at <= now, through cache_entries_purge), except `building` entries whose builder lease
 * expired less than `grace` ago (the builder may still complete; see migration 0003).
 */
export const DELETE_EXPIRED_CACHE_ENTRIES = `
  DELETE FROM cache_entries
  WHERE purge_at <= @now AND (status <> 'building' OR purge_at + @grace_ms < @now)`;

/** Values bound by `COMPLETE_CACHE_ENTRY`. */
export interface CompleteCacheParams {
  cache: string;
  key: string;
  token: string;
  value: string;
  expires_at: number;
  stale_until: number | null;
  now: number;
}

/** Values bound by `FAIL_CACHE_ENTRY`. */
export interface FailCacheParams {
  cache: string;
  key: string;
  token: string;
  error: string;
  expires_at: number;
  now: number;
}

/** Prepares the statements of the cache; the schema must be migrated first. */
export function prepareCacheStatements(db: SqliteDatabase) {
  type CacheKeyParams = [cache: string, key: string];
  return {
    selectCacheEntry: db.prepare<CacheKeyParams, CacheEntryRow>(SELECT_CACHE_ENTRY),
    listCacheEntries: db.prepare<{ status: string | null; cache: string | null; limit: number }, CacheEntryRow>(LIST_CACHE_ENTRIES),
    upsertCacheEntry: db.prepare<CacheEntryRow>(UPSERT_CACHE_ENTRY),
    completeCacheEntry: db.prepare<CompleteCacheParams>(COMPLETE_CACHE_ENTRY),
    failCacheEntry: db.prepare<FailCacheParams>(FAIL_CACHE_ENTRY),
    deleteBuildingCacheEntry: db.prepare<[...CacheKeyParams, token: string]>(DELETE_BUILDING_CACHE_ENTRY),
    releaseRevalidation: db.prepare<[now: number, ...CacheKeyParams, token: string]>(RELEASE_REVALIDATION),
    renewCacheLease: db.prepare<{ cache: string; key: string; token: string; builder_until: number; now: number }>(RENEW_CACHE_LEASE),
    deleteExpiredCacheEntries: db.prepare<{ now: number; grace_ms: number }>(DELETE_EXPIRED_CACHE_ENTRIES),
  };
}
