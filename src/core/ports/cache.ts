/**
 * The `cache` sub-port: single-flight cache entries as the store keeps them. The engine's facade
 * over it is core/cache.ts + engine/single-flight-cache.ts.
 */
import type { JsonValue } from '../model.ts';

/** State of a single-flight cache entry. */
export const CacheEntryStatus = {
  /** A builder holds the lease and is building; nothing to serve yet. */
  Building: 'building',
  /** Built: `value` is served until `expiresAt` (then stale until `staleUntil`, if set). */
  Ready: 'ready',
  /** Negative entry: the build failed permanently; `error` is served until `expiresAt`. */
  Failed: 'failed',
} as const;
export type CacheEntryStatus = (typeof CacheEntryStatus)[keyof typeof CacheEntryStatus];

/**
 * One single-flight cache entry `(cache, key)`. A `building` entry always has a builder lease; a
 * `ready` entry has one while it is being revalidated (stale-while-revalidate); `failed` never.
 */
export interface CacheEntry {
  cache: string;
  key: string;
  status: CacheEntryStatus;
  /** `ready`: the built value (e.g. `{ artifact: 'sha256:...' }`); otherwise null (or the old value while revalidating). */
  value: JsonValue | null;
  /** `failed`: the permanent error as `{ code, message, class }`; otherwise null. */
  error: JsonValue | null;
  builderOwner: string | null;
  builderToken: string | null;
  /** Fence of the current builder lease (from the store's fence sequence). */
  builderFence: number | null;
  builderUntil: number | null;
  /** `ready`/`failed`: fresh before this time (store clock, epoch ms). */
  expiresAt: number | null;
  /** `ready`: may be served stale (while one builder revalidates) before this time; null = never stale. */
  staleUntil: number | null;
  updatedAt: number;
}

/** A request to use `(cache, key)`; see `CachePort.acquire`. */
export interface CacheAcquireRequest {
  cache: string;
  key: string;
  /** Who builds if this caller becomes the builder (worker id or process id), for operators. */
  owner: string;
  /** The builder token this caller will hold if it becomes the builder. */
  token: string;
  /** Builder lease length from now. */
  leaseMs: number;
}

/** Outcome of `CachePort.acquire`. */
export type CacheAcquireResult =
  /** `ready` and fresh: serve `entry.value`. */
  | { state: 'hit'; entry: CacheEntry }
  /**
   * `ready`, past `expiresAt` but before `staleUntil`: serve `entry.value`. `revalidate` is true
   * when this caller took the builder lease to rebuild it (at most one caller at a time).
   */
  | { state: 'stale'; entry: CacheEntry; revalidate: boolean }
  /** `failed` and fresh: the negative entry; `entry.error` says why. */
  | { state: 'negative'; entry: CacheEntry }
  /** Another caller holds a live builder lease on an entry with nothing servable: wait for it. */
  | { state: 'building'; entry: CacheEntry }
  /**
   * This caller now holds the builder lease (`entry.builderToken === token`): the entry was
   * missing, expired (ready past `staleUntil`/`expiresAt`, failed past `expiresAt`) or its
   * builder's lease expired. Build, then `CachePort.complete` or `CachePort.fail`.
   */
  | { state: 'build'; entry: CacheEntry };

/** Ends a build with a value; see `CachePort.complete`. */
export interface CacheCompleteRequest {
  cache: string;
  key: string;
  token: string;
  value: JsonValue;
  /** Fresh for this long from now (the caller adds jitter). */
  ttlMs: number;
  /** Servable stale for this long after it expires; 0 = never stale. */
  staleMs: number;
}

/** Ends a build without a value; see `CachePort.fail`. */
export interface CacheFailRequest {
  cache: string;
  key: string;
  token: string;
  /**
   * A permanent failure: the entry becomes a negative entry (`failed`) for `ttlMs`. Absent
   * (transient failure): the lease is released: a `building` entry is removed, a revalidating
   * `ready` entry keeps its old value.
   */
  negative?: { error: JsonValue; ttlMs: number };
}

/** Filter for {@link CachePort.list}. */
export interface ListCacheEntriesQuery {
  /** Only entries in this state (e.g. `building`, for what is being built right now). */
  status?: CacheEntryStatus;
  /** Only entries of this cache. */
  cache?: string;
  limit: number;
}

/** The single-flight cache's entries; each method is one atomic unit on the store clock. */
export interface CachePort {
  /**
   * Single-flight entry point: reads `(cache, key)` and, when nothing servable is fresh and no
   * live builder holds it, makes this caller the builder (`building`, or `ready` + builder lease
   * when revalidating a stale value) with a new fence. Of any number of concurrent callers for
   * one key, exactly one gets `build` (or `stale` with `revalidate: true`); the others get
   * `building` (or `stale` with `revalidate: false`).
   */
  acquire(request: CacheAcquireRequest): Promise<CacheAcquireResult>;

  /** Reads `(cache, key)` without changing it; null when absent. */
  get(cache: string, key: string): Promise<CacheEntry | null>;

  /**
   * Stores the built value (`ready`, builder lease cleared, `expiresAt = now + ttlMs`,
   * `staleUntil = expiresAt + staleMs` or null) if `token` is still the entry's builder token
   * (even past its lease, as long as nobody took it over). Returns false, changing nothing, otherwise.
   */
  complete(request: CacheCompleteRequest): Promise<boolean>;

  /** Ends a build without a value (see {@link CacheFailRequest}); false, changing nothing, if `token` is not the builder. */
  fail(request: CacheFailRequest): Promise<boolean>;

  /** Entries matching the filter, by cache then key; changes nothing. For operators (the dashboard). */
  list(query: ListCacheEntriesQuery): Promise<CacheEntry[]>;

  /** Extends the builder lease by `leaseMs` from now if `token` still holds it. */
  renew(cache: string, key: string, token: string, leaseMs: number): Promise<boolean>;

  /**
   * Housekeeping: deletes entries that can no longer be served: `ready` past `staleUntil` (or
   * `expiresAt` when not stale-able) and `failed` past `expiresAt`, with no live builder lease;
   * and `building` entries whose builder lease expired more than `graceMs` ago. Returns how many.
   */
  deleteExpired(graceMs: number): Promise<number>;
}
