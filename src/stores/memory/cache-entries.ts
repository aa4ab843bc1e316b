/**
 * The single-flight cache of the memory store: one entry per `(cache, key)`, a builder lease
 * fenced from the state's fence sequence, stale-while-revalidate and negative entries. Every
 * function is one synchronous step on the state, so "exactly one builder" holds by construction.
 */
import type { CacheAcquireRequest, CacheAcquireResult, CacheCompleteRequest, CacheEntry, CacheFailRequest } from '../../core/ports/cache.ts';
import { CacheEntryStatus } from '../../core/ports/cache.ts';
import type { MemoryState } from './state.ts';

/** Map key of `(cache, key)`; NUL cannot clash with names on either side. */
function entryId(cache: string, key: string): string {
  return `${cache}\0${key}`;
}

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
export function acquireCacheEntry(state: MemoryState, request: CacheAcquireRequest): CacheAcquireResult {
  const now = state.clock.now();
  const id = entryId(request.cache, request.key);
  const entry = state.cacheEntries.get(id);
  if (!entry) {
    const created: CacheEntry = {
      cache: request.cache,
      key: request.key,
      status: CacheEntryStatus.Building,
      value: null,
      error: null,
      builderOwner: null,
      builderToken: null,
      builderFence: null,
      builderUntil: null,
      expiresAt: null,
      staleUntil: null,
      updatedAt: now,
    };
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
export function getCacheEntry(state: MemoryState, cache: string, key: string): CacheEntry | null {
  return state.cacheEntries.get(entryId(cache, key)) ?? null;
}

/**
 * The entry whose builder token is `token`, or undefined. The lease deadline is deliberately not
 * checked: a late builder still owns the entry until somebody takes it over (which changes the token).
 */
function heldBy(state: MemoryState, cache: string, key: string, token: string): CacheEntry | undefined {
  const entry = state.cacheEntries.get(entryId(cache, key));
  return entry !== undefined && entry.builderToken !== null && entry.builderToken === token ? entry : undefined;
}

/** Stores the built value if `token` is still the builder. */
export function completeCacheEntry(state: MemoryState, request: CacheCompleteRequest): boolean {
  const entry = heldBy(state, request.cache, request.key, request.token);
  if (!entry) return false;
  const now = state.clock.now();
  entry.status = CacheEntryStatus.Ready;
  entry.value = structuredClone(request.value);
  entry.error = null;
  clearBuilderLease(entry);
  entry.expiresAt = now + request.ttlMs;
  entry.staleUntil = request.staleMs > 0 ? entry.expiresAt + request.staleMs : null;
  entry.updatedAt = now;
  return true;
}

/** Ends a build without a value: a negative entry, or the lease released. */
export function failCacheEntry(state: MemoryState, request: CacheFailRequest): boolean {
  const entry = heldBy(state, request.cache, request.key, request.token);
  if (!entry) return false;
  const now = state.clock.now();
  clearBuilderLease(entry);
  entry.updatedAt = now;
  if (request.negative) {
    entry.status = CacheEntryStatus.Failed;
    entry.value = null;
    entry.error = structuredClone(request.negative.error);
    entry.expiresAt = now + request.negative.ttlMs;
    entry.staleUntil = null;
  } else if (entry.status === CacheEntryStatus.Building) {
    // Nothing to keep: the next caller builds afresh.
    state.cacheEntries.delete(entryId(entry.cache, entry.key));
  }
  // A revalidated `ready` entry keeps its old value and expiry; the next stale caller revalidates.
  return true;
}

/** Extends the builder lease if `token` is still the builder (see {@link heldBy}). */
export function renewCacheLease(state: MemoryState, cache: string, key: string, token: string, leaseMs: number): boolean {
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
export function deleteExpiredCacheEntries(state: MemoryState, graceMs: number): number {
  const now = state.clock.now();
  let deleted = 0;
  for (const [id, entry] of state.cacheEntries) {
    if (!isUnservable(entry, now, graceMs)) continue;
    state.cacheEntries.delete(id);
    deleted += 1;
  }
  return deleted;
}
