/**
 * Per-process LRUs in front of the single-flight cache (`CacheKeyOptions.local`). They hold ready
 * values only, each with the expiry of the shared entry it copies, so a copy is never served
 * after the shared entry could have changed (a ready entry changes only once expired). Plain
 * in-memory maps: no I/O, time from the injected clock.
 */
import type { LocalCacheOptions } from '../core/cache.ts';
import type { JsonValue } from '../core/model.ts';

/** Capacity of an LRU whose options name none. */
export const DEFAULT_LOCAL_CACHE_ENTRIES = 1_000;

/** A copied ready value. */
interface LocalEntry {
  value: JsonValue;
  /** Epoch ms (engine clock) after which the copy is not served. */
  expiresAt: number;
}

/** One LRU: a Map keeps insertion order, so the first key is the least recently used. */
class LocalLru {
  private readonly entries = new Map<string, LocalEntry>();

  constructor(private maxEntries: number) {}

  /** The fresh copy of `key` (and marks it most recently used), or undefined; drops an expired one. */
  get(key: string, now: number): JsonValue | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= now) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, entry: LocalEntry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** The largest capacity any caller asked for wins (stages sharing an LRU may differ). */
  grow(maxEntries: number): void {
    this.maxEntries = Math.max(this.maxEntries, maxEntries);
  }
}

/** Every LRU of one process, by name. */
export interface LocalCaches {
  /** Fresh copy of `(cache, key)` in the LRU `options.name`, or undefined. */
  get(options: LocalCacheOptions, slot: string, now: number): JsonValue | undefined;
  /** Keeps a ready value until `expiresAt` (engine clock); a copy already expired is not kept. */
  put(options: LocalCacheOptions, slot: string, value: JsonValue, expiresAt: number, now: number): void;
  /** Drops the copy (the shared entry is stale, failed or being rebuilt). */
  drop(options: LocalCacheOptions, slot: string): void;
}

/** Creates the LRUs of one process (one per engine). */
export function createLocalCaches(): LocalCaches {
  const lrus = new Map<string, LocalLru>();
  const lru = (options: LocalCacheOptions): LocalLru => {
    const maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_LOCAL_CACHE_ENTRIES);
    let found = lrus.get(options.name);
    if (!found) {
      found = new LocalLru(maxEntries);
      lrus.set(options.name, found);
    } else {
      found.grow(maxEntries);
    }
    return found;
  };
  return {
    get: (options, slot, now) => lru(options).get(slot, now),
    put(options, slot, value, expiresAt, now) {
      if (expiresAt > now) lru(options).set(slot, { value, expiresAt });
      else lru(options).delete(slot);
    },
    drop: (options, slot) => lru(options).delete(slot),
  };
}
