/**
 * Version counters of the memory backend: `allocateVersion` hands out 1, 2, 3, ... per
 * `(scope, key)`. One synchronous operation, so no value is ever handed out twice.
 */
import type { MemoryStore } from './store.ts';

/** Increments the counter `(scope, key)` and returns its new value (1 on first use). */
export function allocateVersion(store: MemoryStore, scope: string, key: string): number {
  // NUL cannot clash with names on either side.
  const id = `${scope}\0${key}`;
  const next = (store.versionCounters.get(id) ?? 0) + 1;
  store.versionCounters.set(id, next);
  return next;
}
