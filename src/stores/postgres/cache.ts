/**
 * The `cache` sub-port of the PostgreSQL store: single-flight cache entries. `acquire` is one
 * call of the `acquire_cache_entry` function (routines/cache.sql), which answers hits, negative
 * entries and builds in progress from a plain read and takes the builder lease only under the row
 * lock or by winning the insert race, so of any number of callers in any number of processes, one
 * at a time holds it. The other methods end, renew or purge a build, each ONE statement fenced by
 * the builder token (see sql/cache.ts).
 */
import type {
  CacheAcquireRequest,
  CacheAcquireResult,
  CacheCompleteRequest,
  CacheEntry,
  CacheFailRequest,
  CachePort,
  ListCacheEntriesQuery,
} from '../../core/ports/cache.ts';
import type { PgContext } from './context.ts';
import { queryListing, queryRows, type ListingFilter } from './database.ts';
import { cacheEntryFromRow, toJsonText, type CacheEntryRow } from './rows.ts';

/** A row of the acquire statement: the decision and the entry after it. */
interface AcquireRow extends CacheEntryRow {
  state: CacheAcquireResult['state'];
  revalidate: boolean;
}

/** A duration as whole milliseconds, at least 0 (times and leases are bigint columns). */
function wholeMs(durationMs: number): number {
  return Math.max(0, Math.round(durationMs));
}

/** The result of an acquire from the function's row. */
function acquireResult(row: AcquireRow): CacheAcquireResult {
  const entry = cacheEntryFromRow(row);
  switch (row.state) {
    case 'stale':
      return { state: 'stale', entry, revalidate: row.revalidate };
    case 'hit':
    case 'negative':
    case 'building':
    case 'build':
      return { state: row.state, entry };
  }
}

/** Single-flight entry point; see `CachePort.acquire`. */
async function acquireCacheEntry(ctx: PgContext, request: CacheAcquireRequest): Promise<CacheAcquireResult> {
  const [row] = await queryRows<AcquireRow>(ctx.pool, ctx.sql.cache.acquireCacheEntry, [
    ctx.now(),
    request.cache,
    request.key,
    request.owner,
    request.token,
    wholeMs(request.leaseMs),
  ]);
  if (!row) throw new Error('acquire_cache_entry returned no row');
  return acquireResult(row);
}

/** Reads `(cache, key)` without changing it; null when absent. */
async function getCacheEntry(ctx: PgContext, cache: string, key: string): Promise<CacheEntry | null> {
  const [row] = await queryRows<CacheEntryRow>(ctx.pool, ctx.sql.cache.getCacheEntry, [cache, key]);
  return row ? cacheEntryFromRow(row) : null;
}

/** Stores the built value if `token` is still the builder token (even past its lease). */
async function completeCacheEntry(ctx: PgContext, request: CacheCompleteRequest): Promise<boolean> {
  const rows = await queryRows(ctx.pool, ctx.sql.cache.completeCacheEntry, [
    ctx.now(),
    request.cache,
    request.key,
    request.token,
    toJsonText(request.value),
    wholeMs(request.ttlMs),
    wholeMs(request.staleMs),
  ]);
  return rows.length === 1;
}

/**
 * Ends a build without a value if `token` is the builder token: a permanent failure leaves a
 * negative entry; a transient one removes a `building` entry or ends a revalidation (old value kept).
 */
async function failCacheEntry(ctx: PgContext, request: CacheFailRequest): Promise<boolean> {
  const { cache, key, token, negative } = request;
  if (negative) {
    const errorJson = toJsonText(negative.error);
    const rows = await queryRows(ctx.pool, ctx.sql.cache.failCacheEntry, [ctx.now(), cache, key, token, errorJson, wholeMs(negative.ttlMs)]);
    return rows.length === 1;
  }
  const [row] = await queryRows<{ released: number }>(ctx.pool, ctx.sql.cache.releaseCacheEntry, [ctx.now(), cache, key, token]);
  return row?.released === 1;
}

/** Entries matching the filter, by cache then key. */
async function listCacheEntries(ctx: PgContext, query: ListCacheEntriesQuery): Promise<CacheEntry[]> {
  const filters: ListingFilter[] = [
    ['status', '=', query.status],
    ['cache', '=', query.cache],
  ];
  return (await queryListing<CacheEntryRow>(ctx.pool, ctx.sql.cache.listCacheEntries, filters, query.limit)).map(cacheEntryFromRow);
}

/** Extends the builder lease by `leaseMs` from now if `token` still holds a live lease. */
async function renewCacheLease(ctx: PgContext, cache: string, key: string, token: string, leaseMs: number): Promise<boolean> {
  const rows = await queryRows(ctx.pool, ctx.sql.cache.renewCacheLease, [ctx.now(), cache, key, token, wholeMs(leaseMs)]);
  return rows.length === 1;
}

/** Deletes the entries that can no longer be served (see sql/cache.ts); returns how many. */
async function deleteExpiredCacheEntries(ctx: PgContext, graceMs: number): Promise<number> {
  // A negative grace would purge builds whose lease has not expired yet.
  const [row] = await queryRows<{ deleted: number }>(ctx.pool, ctx.sql.cache.deleteExpiredCacheEntries, [ctx.now(), wholeMs(graceMs)]);
  return row?.deleted ?? 0;
}

/** Single-flight cache entries over the context's pool. */
export function createCachePort(ctx: PgContext): CachePort {
  return ctx.port<CachePort>({
    acquire: (request) => acquireCacheEntry(ctx, request),
    get: (cache, key) => getCacheEntry(ctx, cache, key),
    complete: (request) => completeCacheEntry(ctx, request),
    fail: (request) => failCacheEntry(ctx, request),
    list: (query) => listCacheEntries(ctx, query),
    renew: (cache, key, token, leaseMs) => renewCacheLease(ctx, cache, key, token, leaseMs),
    deleteExpired: (graceMs) => deleteExpiredCacheEntries(ctx, graceMs),
  });
}
