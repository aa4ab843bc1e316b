/**
 * The `cache` sub-port of the Redis store: single-flight cache entries. Each method is one script
 * (routines/cache-*.lua, keys in lib-cache.lua): `acquire` decides and takes the builder lease in
 * one script, so of any number of callers in any number of processes one at a time holds it; the
 * other methods end, renew or purge a build, fenced by the builder token.
 */
import type {
  CacheAcquireRequest,
  CacheAcquireResult,
  CacheCompleteRequest,
  CacheEntry,
  CacheEntryStatus,
  CacheFailRequest,
  CachePort,
  ListCacheEntriesQuery,
} from '../../core/ports/cache.ts';
import type { RedisContext } from './context.ts';
import { fieldsOf, json, listOf, numeric, required, requiredNumber, text, toJson, type FlatHash } from './rows.ts';

/** A duration as whole milliseconds, at least 0 (as the SQL stores take it). */
export function wholeMs(durationMs: number): number {
  return Math.max(0, Math.round(durationMs));
}

/** A stored entry (flat HGETALL, see lib-cache.lua) as a {@link CacheEntry}. */
function cacheEntryFrom(flat: FlatHash): CacheEntry {
  const f = fieldsOf(flat);
  return {
    cache: required(f, 'cache'),
    key: required(f, 'key'),
    status: required(f, 'status') as CacheEntryStatus,
    value: json(f, 'value'),
    error: json(f, 'error'),
    builderOwner: text(f, 'builderOwner'),
    builderToken: text(f, 'builderToken'),
    builderFence: numeric(f, 'builderFence'),
    builderUntil: numeric(f, 'builderUntil'),
    expiresAt: numeric(f, 'expiresAt'),
    staleUntil: numeric(f, 'staleUntil'),
    updatedAt: requiredNumber(f, 'updatedAt'),
  };
}

/** Single-flight entry point; see `CachePort.acquire`. */
async function acquireCacheEntry(ctx: RedisContext, request: CacheAcquireRequest): Promise<CacheAcquireResult> {
  const [state, revalidate, flat] = await ctx.call<[CacheAcquireResult['state'], boolean, FlatHash]>('cache-acquire', [
    request.cache,
    request.key,
    request.owner,
    request.token,
    wholeMs(request.leaseMs),
  ]);
  const entry = cacheEntryFrom(flat);
  return state === 'stale' ? { state, entry, revalidate } : { state, entry };
}

/** Reads `(cache, key)` without changing it; null when absent. */
async function getCacheEntry(ctx: RedisContext, cache: string, key: string): Promise<CacheEntry | null> {
  const flat = await ctx.call<FlatHash | null>('cache-get', [cache, key]);
  return flat === null ? null : cacheEntryFrom(flat);
}

/** Ends a build without a value; see {@link CacheFailRequest}. */
function failCacheEntry(ctx: RedisContext, request: CacheFailRequest): Promise<boolean> {
  const { negative } = request;
  const permanent = negative === undefined ? ['0', '', 0] : ['1', toJson(negative.error), wholeMs(negative.ttlMs)];
  return ctx.call<boolean>('cache-fail', [request.cache, request.key, request.token, ...permanent]);
}

/** Entries matching the filter, by cache then key. */
async function listCacheEntries(ctx: RedisContext, query: ListCacheEntriesQuery): Promise<CacheEntry[]> {
  const limit = Math.floor(query.limit);
  if (!(limit > 0)) return [];
  const byCache = query.cache === undefined ? ['0', ''] : ['1', query.cache];
  const flats = await ctx.call<FlatHash[] | Record<string, never>>('cache-list', [query.status ?? '', ...byCache, limit]);
  return listOf(flats).map(cacheEntryFrom);
}

/** Single-flight cache entries on Redis. */
export function createCachePort(ctx: RedisContext): CachePort {
  return ctx.port<CachePort>({
    acquire: (request) => acquireCacheEntry(ctx, request),
    get: (cache, key) => getCacheEntry(ctx, cache, key),
    complete: (request: CacheCompleteRequest) =>
      ctx.call<boolean>('cache-complete', [
        request.cache,
        request.key,
        request.token,
        toJson(request.value),
        wholeMs(request.ttlMs),
        wholeMs(request.staleMs),
      ]),
    fail: (request) => failCacheEntry(ctx, request),
    list: (query) => listCacheEntries(ctx, query),
    renew: (cache, key, token, leaseMs) => ctx.call<boolean>('cache-renew', [cache, key, token, wholeMs(leaseMs)]),
    deleteExpired: async (graceMs) => Number(await ctx.call<string>('cache-delete-expired', [wholeMs(graceMs)])),
  });
}
