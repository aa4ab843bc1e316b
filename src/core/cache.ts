/**
 * The single-flight cache as handlers and routes see it: `getOrBuild` returns a cached value or
 * builds it, with at most one build per key at a time across every process sharing the store.
 * Implemented by the engine (src/engine/single-flight-cache.ts) over the Store's cache entries.
 */
import type { JsonValue } from './model.ts';
import type { CacheRequestResult } from './observer.ts';

/** Which entry, and how long it lives. */
export interface CacheKeyOptions {
  /** Cache name (metrics label `cache`), e.g. `qr`. */
  cache: string;
  key: string;
  /** Freshness of a built value. Jitter shortens it by up to `jitterRatio` so entries do not expire together. */
  ttlMs: number;
  /** @default 0.1 */
  jitterRatio?: number;
  /** Stale-while-revalidate: after `ttlMs`, serve the old value this long while one caller rebuilds. @default 0 */
  staleMs?: number;
  /** How long a permanent build failure is remembered (the negative entry). @default 30000 */
  negativeTtlMs?: number;
  /** Builder lease; renewed at a third of it while the build runs. @default 30000 */
  leaseMs?: number;
  /** How long a caller waits for another caller's build before giving up. @default 60000 */
  waitTimeoutMs?: number;
  /** Aborts waiting (and the caller's own build). */
  signal?: AbortSignal;
  /**
   * A per-process LRU in front of the shared entries, for ready values only: read-through (a
   * fresh local copy answers without a store round trip), write-through (a value this process
   * built, got or waited for is kept). Never a failure, a stale value or a build in progress.
   * A copy lives until the shared entry's expiry (or `ttlMs` from now, if sooner): a shared entry
   * only changes once expired, and any lookup that reaches it replaces the copy.
   */
  local?: LocalCacheOptions;
}

/** Which per-process LRU a key goes to; see {@link CacheKeyOptions.local}. */
export interface LocalCacheOptions {
  /** LRU name (metrics label `cache` of `kiln_local_cache_requests_total`); keys of any `cache` may share one. */
  name: string;
  /** Most values the LRU holds; the least recently used go first. @default 1000 */
  maxEntries?: number;
}

/** What a build function receives. */
export interface CacheBuildContext {
  /** Aborted when the caller's signal aborts or the builder lease is lost. */
  signal: AbortSignal;
  /** Fence of this build's lease: larger means a later builder. */
  fence: number;
}

/** A value and how it was obtained. */
export interface CacheLookup<T extends JsonValue = JsonValue> {
  value: T;
  result: CacheRequestResult;
}

/** The single-flight cache. */
export interface SingleFlightCache {
  /**
   * The fresh value of the key, or a build: the one caller holding the builder lease runs `build`
   * and stores its value; concurrent callers wait for it (also in other processes). A build that
   * throws a permanent error becomes a negative entry, rethrown to callers until it expires; any
   * other error releases the key (the next caller builds) and is rethrown to this caller only.
   */
  getOrBuild<T extends JsonValue>(options: CacheKeyOptions, build: (ctx: CacheBuildContext) => Promise<T>): Promise<CacheLookup<T>>;
}

/**
 * One cache's lookups by how they were answered, and builds started, as a process counted them
 * (its `kiln_cache_requests_total` and `kiln_cache_builds_total`).
 */
export type CacheCounters = { cache: string; builds: number } & Record<CacheRequestResult, number>;
