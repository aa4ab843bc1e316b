/**
 * The single-flight cache facade over the Store's cache entries (see core/cache.ts for the
 * contract). The store decides who builds (`cache.acquire` hands the builder lease to exactly
 * one caller), so the guarantee holds across processes; this facade adds the waiting, the lease
 * renewal during a build, TTL jitter, stale-while-revalidate and the metrics.
 *
 * Waiters poll the entry with a growing interval; waiters in this process are also woken at once
 * when a build here ends, so a burst of identical requests to one process costs one build and
 * almost no polling.
 */
import type { CacheBuildContext, CacheKeyOptions, CacheLookup, SingleFlightCache } from '../core/cache.ts';
import { WAKE_REASON, type Clock } from '../core/clock.ts';
import { ErrorClass, StageFailure } from '../core/errors.ts';
import type { IdGenerator } from '../core/ids.ts';
import type { JsonValue } from '../core/model.ts';
import { CacheRequestResult, type EngineObserver } from '../core/observer.ts';
import { classifyError } from '../core/policy/retry.ts';
import type { CacheEntry } from '../core/ports/cache.ts';
import type { Store } from '../core/ports/store.ts';
import { createLocalCaches } from './local-cache.ts';
import { withSpan } from './tracing.ts';

/** What the cache needs from the engine. */
export interface SingleFlightCacheDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  observer: EngineObserver;
  random: () => number;
  /** Recorded as the builder (operators see who builds). */
  owner: string;
}

const DEFAULTS = { jitterRatio: 0.1, staleMs: 0, negativeTtlMs: 30_000, leaseMs: 30_000, waitTimeoutMs: 60_000 } as const;
/** First and largest poll interval of a waiter. */
const POLL_FIRST_MS = 5;
const POLL_MAX_MS = 100;
/**
 * A waiter asks the store again (which hands the build over if the builder's lease expired) this
 * often; in between it only reads the entry.
 */
const REACQUIRE_EVERY_MS = 1_000;

type Resolved = Required<Omit<CacheKeyOptions, 'signal' | 'local'>> & { signal: AbortSignal | undefined };

/** A shared lookup and, for a fresh ready value, until when it is fresh (null: not to be copied locally). */
interface SharedLookup<T extends JsonValue> {
  lookup: CacheLookup<T>;
  freshUntil: number | null;
}

function resolveOptions(options: CacheKeyOptions): Resolved {
  return {
    cache: options.cache,
    key: options.key,
    ttlMs: options.ttlMs,
    jitterRatio: options.jitterRatio ?? DEFAULTS.jitterRatio,
    staleMs: options.staleMs ?? DEFAULTS.staleMs,
    negativeTtlMs: options.negativeTtlMs ?? DEFAULTS.negativeTtlMs,
    leaseMs: options.leaseMs ?? DEFAULTS.leaseMs,
    waitTimeoutMs: options.waitTimeoutMs ?? DEFAULTS.waitTimeoutMs,
    signal: options.signal,
  };
}

/** The stored permanent failure, rethrown as the permanent failure it was. */
function negativeError(entry: CacheEntry): StageFailure {
  const e = (entry.error ?? {}) as { code?: string; message?: string };
  return StageFailure.permanent(e.message ?? 'cached failure', {
    code: e.code ?? 'STAGE_FAILED',
    details: { cache: entry.cache, key: entry.key, cachedFailure: true },
  });
}

/** Creates the cache facade. */
export function createSingleFlightCache(deps: SingleFlightCacheDeps): SingleFlightCache {
  /** Waiters in this process, woken when a build here ends. */
  const localWaiters = new Map<string, Set<() => void>>();
  const slot = (cache: string, key: string): string => `${cache}\u0000${key}`;

  const wakeLocal = (cache: string, key: string): void => {
    const id = slot(cache, key);
    const waiters = localWaiters.get(id);
    localWaiters.delete(id);
    for (const wake of waiters ?? []) wake();
  };

  /** Sleeps `ms`, or less if a local build of the key ends or the signal aborts. */
  const pause = async (o: Resolved, ms: number): Promise<void> => {
    const id = slot(o.cache, o.key);
    const woken = new AbortController();
    const onAbort = (): void => woken.abort(WAKE_REASON);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const waiters = localWaiters.get(id) ?? new Set<() => void>();
    localWaiters.set(id, waiters);
    const wake = (): void => woken.abort(WAKE_REASON);
    waiters.add(wake);
    try {
      await deps.clock.sleep(ms, woken.signal);
    } finally {
      waiters.delete(wake);
      o.signal?.removeEventListener('abort', onAbort);
    }
  };

  const ttlWithJitter = (o: Resolved): number => Math.max(1, Math.round(o.ttlMs * (1 - o.jitterRatio * deps.random())));

  /** Runs `build` holding the lease (renewed meanwhile) and stores its outcome. */
  const runBuild = async <T extends JsonValue>(
    o: Resolved,
    entry: CacheEntry,
    token: string,
    build: (ctx: CacheBuildContext) => Promise<T>,
  ): Promise<{ value: T; freshUntil: number }> => {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(o.signal?.reason);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let renewing = true;
    const renewEveryMs = Math.max(1, Math.floor(o.leaseMs / 3));
    const renewLoop = (async () => {
      while (renewing) {
        await deps.clock.sleep(renewEveryMs, controller.signal);
        if (!renewing || controller.signal.aborted) return;
        const held = await deps.store.cache.renew(o.cache, o.key, token, o.leaseMs).catch(() => true);
        if (!held) controller.abort(StageFailure.retryable(`builder lease on cache ${o.cache} key ${o.key} was lost`, { code: 'LEASE_LOST' }));
      }
    })();
    deps.observer.cacheBuild(o.cache);
    try {
      const value = await build({ signal: controller.signal, fence: entry.builderFence ?? 0 });
      const ttlMs = ttlWithJitter(o);
      // A lost lease means another builder took over; this value is as good as theirs.
      await deps.store.cache.complete({ cache: o.cache, key: o.key, token, value, ttlMs, staleMs: o.staleMs });
      return { value, freshUntil: deps.clock.now() + ttlMs };
    } catch (err) {
      const error = classifyError(err);
      const negative = error.class === ErrorClass.permanent ? { error: { class: error.class, code: error.code, message: error.message }, ttlMs: o.negativeTtlMs } : undefined;
      await deps.store.cache.fail({ cache: o.cache, key: o.key, token, ...(negative ? { negative } : {}) }).catch(() => false);
      throw err;
    } finally {
      renewing = false;
      // Ends the renew loop's sleep; a reason, since abort() without one builds a DOMException.
      controller.abort(WAKE_REASON);
      o.signal?.removeEventListener('abort', onAbort);
      await renewLoop.catch(() => undefined);
      wakeLocal(o.cache, o.key);
    }
  };

  /** Waits for another caller's build; returns the entry once it is ready, or null to try acquiring again. */
  const waitForBuild = async (o: Resolved, deadline: number): Promise<CacheEntry | null> => {
    let intervalMs = POLL_FIRST_MS;
    const reacquireAt = deps.clock.now() + REACQUIRE_EVERY_MS;
    for (;;) {
      if (o.signal?.aborted) throw o.signal.reason;
      if (deps.clock.now() >= deadline) {
        throw StageFailure.retryable(`waited ${o.waitTimeoutMs} ms for another build of cache ${o.cache} key ${o.key}`, { code: 'CACHE_WAIT_TIMEOUT' });
      }
      await pause(o, intervalMs);
      intervalMs = Math.min(POLL_MAX_MS, Math.ceil(intervalMs * 1.5));
      const entry = await deps.store.cache.get(o.cache, o.key);
      if (entry === null) return null;
      if (entry.status === 'ready' || entry.status === 'failed') return entry;
      // Still building: the store takes it over for us if its builder's lease has expired.
      if (deps.clock.now() >= reacquireAt) return null;
    }
  };

  /** The lookup through the store's shared entries (single-flight across processes). */
  const shared = async <T extends JsonValue>(o: Resolved, build: (ctx: CacheBuildContext) => Promise<T>): Promise<SharedLookup<T>> => {
    const deadline = deps.clock.now() + o.waitTimeoutMs;
    let waited = false;
    const count = (result: CacheRequestResult): void => deps.observer.cacheRequest(o.cache, result);
    for (;;) {
      const token = deps.ids.token();
      const acquired = await deps.store.cache.acquire({ cache: o.cache, key: o.key, owner: deps.owner, token, leaseMs: o.leaseMs });
      switch (acquired.state) {
        case 'hit': {
          // A value that appeared while this caller waited is another caller's build.
          const result = waited ? CacheRequestResult.wait : CacheRequestResult.hit;
          count(result);
          return { lookup: { value: acquired.entry.value as T, result }, freshUntil: acquired.entry.expiresAt };
        }
        case 'negative':
          count(CacheRequestResult.negative);
          throw negativeError(acquired.entry);
        case 'stale':
          count(CacheRequestResult.stale);
          // The revalidation runs detached: this caller is served the stale value now.
          if (acquired.revalidate) void runBuild(o, acquired.entry, token, build).catch(() => undefined);
          return { lookup: { value: acquired.entry.value as T, result: CacheRequestResult.stale }, freshUntil: null };
        case 'build': {
          count(CacheRequestResult.miss);
          const built = await runBuild(o, acquired.entry, token, build);
          return { lookup: { value: built.value, result: CacheRequestResult.miss }, freshUntil: built.freshUntil };
        }
        case 'building': {
          const entry = await waitForBuild(o, deadline);
          waited = true;
          if (entry?.status === 'ready') {
            count(CacheRequestResult.wait);
            return { lookup: { value: entry.value as T, result: CacheRequestResult.wait }, freshUntil: entry.expiresAt };
          }
          if (entry?.status === 'failed') {
            count(CacheRequestResult.negative);
            throw negativeError(entry);
          }
        }
      }
    }
  };

  const locals = createLocalCaches();

  /** One lookup (see `SingleFlightCache.getOrBuild`): the per-process LRU first when asked, then the shared entries. */
  const lookup = async <T extends JsonValue>(options: CacheKeyOptions, build: (ctx: CacheBuildContext) => Promise<T>): Promise<CacheLookup<T>> => {
    const o = resolveOptions(options);
    const local = options.local;
    if (!local) return (await shared(o, build)).lookup;
    const id = slot(o.cache, o.key);
    const copy = locals.get(local, id, deps.clock.now());
    deps.observer.localCacheRequest(local.name, copy === undefined ? 'miss' : 'hit');
    if (copy !== undefined) return { value: copy as T, result: CacheRequestResult.hit };
    let answer: SharedLookup<T>;
    try {
      answer = await shared(o, build);
    } catch (err) {
      locals.drop(local, id);
      throw err;
    }
    const now = deps.clock.now();
    // Only fresh ready values are copied, and never past the shared entry's expiry.
    if (answer.freshUntil === null) locals.drop(local, id);
    else locals.put(local, id, answer.lookup.value, Math.min(answer.freshUntil, now + o.ttlMs), now);
    return answer.lookup;
  };

  return {
    getOrBuild: (options, build) =>
      withSpan(
        'kiln.cache',
        async (span) => {
          const found = await lookup(options, build);
          if (span.isRecording()) span.setAttribute('kiln.cache.result', found.result);
          return found;
        },
        { attributes: () => ({ 'kiln.cache.name': options.cache, 'kiln.cache.key': options.key }) },
      ),
  };
}
