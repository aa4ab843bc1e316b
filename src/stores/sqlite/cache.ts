/**
 * The `cache` sub-port of the SQLite store, single flight: `acquire` reads `(cache, key)` and, when nothing servable is
 * fresh and no live builder holds it, makes the caller the builder with a fence from the job
 * fence sequence — all in the caller's BEGIN IMMEDIATE transaction, which holds the database
 * write lock from before the read until after the write. Of any number of callers in any number
 * of processes, one therefore sees the entry without a builder and takes it; every later one sees
 * that builder. The other operations end, renew or purge a build, each one statement fenced by
 * the builder token.
 */
import type { CacheAcquireRequest, CacheAcquireResult, CacheCompleteRequest, CacheEntry, CacheFailRequest, CachePort, ListCacheEntriesQuery } from '../../core/ports/cache.ts';
import type { SqliteContext } from './context.ts';
import { takeFence } from './jobs/leases.ts';
import { cacheEntryFromRow, toJson, type CacheEntryRow } from './rows.ts';

/**
 * What an acquire finds: something to report as is (`hit`, `negative`, `building`, `stale`
 * while another caller revalidates), or a build lease to take (`build`, or `revalidate` a
 * stale value that stays servable meanwhile).
 */
type AcquireDecision = 'hit' | 'negative' | 'building' | 'stale' | 'revalidate' | 'build';

/** True while a builder's lease runs (the same rule as job leases: expired at `builder_until`). */
function hasLiveBuilder(row: CacheEntryRow, now: number): boolean {
  return row.builder_token !== null && (row.builder_until ?? 0) > now;
}

/** Decides an acquire from the stored row at `now` (store clock); fresh means `now < expires_at`. */
function decide(row: CacheEntryRow | undefined, now: number): AcquireDecision {
  if (!row) return 'build';
  const live = hasLiveBuilder(row, now);
  if (row.status === 'ready') {
    if (now < (row.expires_at ?? 0)) return 'hit';
    if (row.stale_until !== null && now < row.stale_until) return live ? 'stale' : 'revalidate';
    // Nothing servable left: wait for a revalidation still running, or rebuild from scratch.
    return live ? 'building' : 'build';
  }
  if (row.status === 'failed') return now < (row.expires_at ?? 0) ? 'negative' : 'build';
  return live ? 'building' : 'build';
}

/**
 * The row after the caller takes the builder lease. A revalidation keeps the stale value (and its
 * times) servable; any other build starts from nothing.
 */
function builderRow(
  request: CacheAcquireRequest,
  row: CacheEntryRow | undefined,
  revalidate: boolean,
  fence: number,
  now: number,
): CacheEntryRow {
  const builder = {
    builder_owner: request.owner,
    builder_token: request.token,
    builder_fence: fence,
    builder_until: now + request.leaseMs,
    updated_at: now,
  };
  if (revalidate && row) return { ...row, ...builder };
  return {
    cache: request.cache,
    key: request.key,
    status: 'building',
    value: null,
    error: null,
    expires_at: null,
    stale_until: null,
    ...builder,
  };
}

/** Single-flight entry point; see `CachePort.acquire`. */
function acquireCacheEntry(ctx: SqliteContext, request: CacheAcquireRequest): CacheAcquireResult {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  const row = sql.selectCacheEntry.get(request.cache, request.key);
  const decision = decide(row, now);
  if (row && decision !== 'build' && decision !== 'revalidate') {
    const entry = cacheEntryFromRow(row);
    return decision === 'stale' ? { state: 'stale', entry, revalidate: false } : { state: decision, entry };
  }
  const revalidate = decision === 'revalidate';
  const next = builderRow(request, row, revalidate, takeFence(ctx), now);
  sql.upsertCacheEntry.run(next);
  const entry = cacheEntryFromRow(next);
  return revalidate ? { state: 'stale', entry, revalidate: true } : { state: 'build', entry };
}

/** Reads `(cache, key)` without changing it; null when absent. */
function getCacheEntry(ctx: SqliteContext, cache: string, key: string): CacheEntry | null {
  const row = ctx.sql().selectCacheEntry.get(cache, key);
  return row ? cacheEntryFromRow(row) : null;
}

/** Stores the built value if `token` is still the builder token (even past its lease). */
function completeCacheEntry(ctx: SqliteContext, request: CacheCompleteRequest): boolean {
  const now = ctx.clock.now();
  const expiresAt = now + request.ttlMs;
  const { changes } = ctx.sql().completeCacheEntry.run({
    cache: request.cache,
    key: request.key,
    token: request.token,
    value: toJson(request.value),
    expires_at: expiresAt,
    stale_until: request.staleMs > 0 ? expiresAt + request.staleMs : null,
    now,
  });
  return changes === 1;
}

/**
 * Ends a build without a value if `token` is the builder token: a permanent failure leaves a
 * negative entry; a transient one removes a `building` entry or ends a revalidation (old value kept).
 */
function failCacheEntry(ctx: SqliteContext, request: CacheFailRequest): boolean {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  const { cache, key, token, negative } = request;
  if (negative) {
    return sql.failCacheEntry.run({ cache, key, token, error: toJson(negative.error), expires_at: now + negative.ttlMs, now }).changes === 1;
  }
  // At most one of the two matches: the token's entry is either building or revalidating.
  const removed = sql.deleteBuildingCacheEntry.run(cache, key, token).changes;
  return removed + sql.releaseRevalidation.run(now, cache, key, token).changes === 1;
}

/** Entries matching the filter, by cache then key. */
function listCacheEntries(ctx: SqliteContext, query: ListCacheEntriesQuery): CacheEntry[] {
  const params = { status: query.status ?? null, cache: query.cache ?? null, limit: Math.max(0, query.limit) };
  return ctx.sql().listCacheEntries.all(params).map(cacheEntryFromRow);
}

/** Extends the builder lease by `leaseMs` from now if `token` still holds a live lease. */
function renewCacheLease(ctx: SqliteContext, cache: string, key: string, token: string, leaseMs: number): boolean {
  const now = ctx.clock.now();
  return ctx.sql().renewCacheLease.run({ cache, key, token, builder_until: now + leaseMs, now }).changes === 1;
}

/** Deletes the entries that can no longer be served (see `DELETE_EXPIRED_CACHE_ENTRIES`); returns how many. */
function deleteExpiredCacheEntries(ctx: SqliteContext, graceMs: number): number {
  // A negative grace would purge builds whose lease has not expired yet.
  const grace = Math.max(0, graceMs);
  return ctx.sql().deleteExpiredCacheEntries.run({ now: ctx.clock.now(), grace_ms: grace }).changes;
}

/** The single-flight cache entries over `ctx`. */
export function createCachePort(ctx: SqliteContext): CachePort {
  return {
    acquire: ctx.write((request) => acquireCacheEntry(ctx, request)),
    get: ctx.outside((cache, key) => getCacheEntry(ctx, cache, key)),
    complete: ctx.write((request) => completeCacheEntry(ctx, request)),
    fail: ctx.write((request) => failCacheEntry(ctx, request)),
    list: ctx.read((query) => listCacheEntries(ctx, query)),
    renew: ctx.write((cache, key, token, leaseMs) => renewCacheLease(ctx, cache, key, token, leaseMs)),
    deleteExpired: ctx.write((graceMs) => deleteExpiredCacheEntries(ctx, graceMs)),
  };
}
