/**
 * The `cache` sub-port of the memory store, single flight: one entry per `(cache, key)`, a
 * builder lease fenced from the state's fence sequence, stale-while-revalidate and negative
 * entries. Every function is one synchronous step on the state, so "exactly one builder" holds
 * by construction.
 */
import type { CacheAcquireRequest, CacheAcquireResult, CacheCompleteRequest, CacheEntry, CacheFailRequest, CachePort, ListCacheEntriesQuery } from '../../core/ports/cache.ts';
import { CacheEntryStatus } from '../../core/ports/cache.ts';
import type { MemoryContext } from './context.ts';
import { copy, newCacheEntry, pairKey } from './rows.ts';
import { deleteWhere, type MemoryState } from './state.ts';

/** A builder lease is live while its deadline is ahead (expired at `builderUntil`, like job leases). */
function hasLiveBuilder(entry: CacheEntry, now: number): boolean {
  return entry.builderToken !== null && entry.builderUntil !== null && entry.builderUntil > now;
}

/** The time from which a `ready` entry serves nothing, stale or fresh. */
function servableUntil(entry: CacheEntry): number {
  return entry.staleUntil ?? entry.expiresAt ?? 0;
}

/** Hands the builder lease to the caller with a new fence. */
function takeBuilderLease(state: MemoryState, entry: CacheEntry, request: CacheAcquireRequest, now: number): void {
  entry.builderOwner = request.owner;
  entry.builderToken = request.token;
  entry.builderFence = state.nextFence();
  entry.builderUntil = now + request.leaseMs;
  entry.updatedAt = now;
}

function clearBuilderLease(entry: CacheEntry): void {
  entry.builderOwner = null;
  entry.builderToken = null;
  entry.builderFence = null;
  entry.builderUntil = null;
}

/** Turns an entry with nothing servable into a `building` one held by the caller. */
function startBuild(state: MemoryState, entry: CacheEntry, request: CacheAcquireRequest, now: number): CacheAcquireResult {
  entry.status = CacheEntryStatus.Building;
  entry.value = null;
  entry.error = null;
  entry.expiresAt = null;
  entry.staleUntil = null;
  takeBuilderLease(state, entry, request, now);
  return { state: 'build', entry };
}

/** A `ready` entry: fresh, stale (one revalidator at a time) or past serving. */
function acquireReady(state: MemoryState, entry: CacheEntry, request: CacheAcquireRequest, now: number): CacheAcquireResult {
  if (now < (entry.expiresAt ?? 0)) return { state: 'hit', entry };
  const live = hasLiveBuilder(entry, now);
  if (now < servableUntil(entry)) {
    if (live) return { state: 'stale', entry, revalidate: false };
    takeBuilderLease(state, entry, request, now);
    return { state: 'stale', entry, revalidate: true };
  }
  // Past serving, but a revalidator is still at work: its result is what everyone waits for.
  if (live) return { state: 'building', entry };
  return startBuild(state, entry, request, now);
}

/** Reads `(cache, key)` and makes the caller the builder when nothing is servable and nobody builds. */
function acquireCacheEntry(state: MemoryState, request: CacheAcquireRequest): CacheAcquireResult {
  const now = state.clock.now();
  const id = pairKey(request.cache, request.key);
  const entry = state.cacheEntries.get(id);
  if (!entry) {
    const created = newCacheEntry(request, now);
    takeBuilderLease(state, created, request, now);
    state.cacheEntries.set(id, created);
    return { state: 'build', entry: created };
  }
  switch (entry.status) {
    case CacheEntryStatus.Ready:
      return acquireReady(state, entry, request, now);
    case CacheEntryStatus.Failed:
      return now < (entry.expiresAt ?? 0) ? { state: 'negative', entry } : startBuild(state, entry, request, now);
    case CacheEntryStatus.Building:
      if (hasLiveBuilder(entry, now)) return { state: 'building', entry };
      return startBuild(state, entry, request, now);
  }
}

/** Reads `(cache, key)` without changing it. */
function getCacheEntry(state: MemoryState, cache: string, key: string): CacheEntry | null {
  return state.cacheEntries.get(pairKey(cache, key)) ?? null;
}

/**
 * The entry whose builder token is `token`, or undefined. The lease deadline is deliberately not
 * checked: a late builder still owns the entry until somebody takes it over (which changes the token).
 */
function heldBy(state: MemoryState, cache: string, key: string, token: string): CacheEntry | undefined {
  const entry = state.cacheEntries.get(pairKey(cache, key));
  return entry !== undefined && entry.builderToken !== null && entry.builderToken === token ? entry : undefined;
}

/** Stores the built value if `token` is still the builder. */
function completeCacheEntry(state: MemoryState, request: CacheCompleteRequest): boolean {
  const entry = heldBy(state, request.cache, request.key, request.token);
  if (!entry) return false;
  const now = state.clock.now();
  entry.status = CacheEntryStatus.Ready;
  entry.value = copy(request.value);
  entry.error = null;
  clearBuilderLease(entry);
  entry.expiresAt = now + request.ttlMs;
  entry.staleUntil = request.staleMs > 0 ? entry.expiresAt + request.staleMs : null;
  entry.updatedAt = now;
  return true;
}

/** Ends a build without a value: a negative entry, or the lease released. */
function failCacheEntry(state: MemoryState, request: CacheFailRequest): boolean {
  const entry = heldBy(state, request.cache, request.key, request.token);
  if (!entry) return false;
  const now = state.clock.now();
  clearBuilderLease(entry);
  entry.updatedAt = now;
  if (request.negative) {
    entry.status = CacheEntryStatus.Failed;
    entry.value = null;
    entry.error = copy(request.negative.error);
    entry.expiresAt = now + request.negative.ttlMs;
    entry.staleUntil = null;
  } else if (entry.status === CacheEntryStatus.Building) {
    // Nothing to keep: the next caller builds afresh.
    state.cacheEntries.delete(pairKey(entry.cache, entry.key));
  }
  // A revalidated `ready` entry keeps its old value and expiry; the next stale caller revalidates.
  return true;
}

/** Extends the builder lease if `token` is still the builder (see {@link heldBy}). */
function renewCacheLease(state: MemoryState, cache: string, key: string, token: string, leaseMs: number): boolean {
  const entry = heldBy(state, cache, key, token);
  if (!entry) return false;
  const now = state.clock.now();
  entry.builderUntil = now + leaseMs;
  entry.updatedAt = now;
  return true;
}

/** True when housekeeping may drop the entry: nothing servable and no builder worth waiting for. */
function isUnservable(entry: CacheEntry, now: number, graceMs: number): boolean {
  switch (entry.status) {
    case CacheEntryStatus.Ready:
      return !hasLiveBuilder(entry, now) && now >= servableUntil(entry);
    case CacheEntryStatus.Failed:
      return now >= (entry.expiresAt ?? 0);
    case CacheEntryStatus.Building:
      return now - (entry.builderUntil ?? 0) > graceMs;
  }
}

/** Deletes entries that can no longer be served; returns how many. */
function deleteExpiredCacheEntries(state: MemoryState, graceMs: number): number {
  const now = state.clock.now();
  return deleteWhere(state.cacheEntries, (entry) => isUnservable(entry, now, graceMs));
}

/** Entries matching the filter, by cache then key (code-point order, as in every store). */
function listCacheEntries(state: MemoryState, query: ListCacheEntriesQuery): CacheEntry[] {
  return [...state.cacheEntries.values()]
    .filter((e) => (query.status === undefined || e.status === query.status) && (query.cache === undefined || e.cache === query.cache))
    .sort((a, b) => (a.cache === b.cache ? (a.key < b.key ? -1 : 1) : a.cache < b.cache ? -1 : 1))
    .slice(0, Math.max(0, query.limit));
}

/** The single-flight cache entries of the state. */
export function createCachePort(ctx: MemoryContext): CachePort {
  const { state } = ctx;
  return {
    acquire: ctx.atomic((request) => acquireCacheEntry(state, request)),
    get: ctx.atomic((cache, key) => getCacheEntry(state, cache, key)),
    complete: ctx.atomic((request) => completeCacheEntry(state, request)),
    fail: ctx.atomic((request) => failCacheEntry(state, request)),
    list: ctx.atomic((query) => listCacheEntries(state, query)),
    renew: ctx.atomic((cache, key, token, leaseMs) => renewCacheLease(state, cache, key, token, leaseMs)),
    deleteExpired: ctx.atomic((graceMs) => deleteExpiredCacheEntries(state, graceMs)),
  };
}
