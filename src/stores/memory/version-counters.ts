/**
 * Version counters of the memory store: `allocateVersion` hands out 1, 2, 3, ... per
 * `(scope, key)`. One synchronous operation, so no value is ever handed out twice.
 */
import type { MemoryState } from './state.ts';

/** Increments the counter `(scope, key)` and returns its new value (1 on first use). */
export function allocateVersion(state: MemoryState, scope: string, key: string): number {
  // NUL cannot clash with names on either side.
  const id = `${scope}\0${key}`;
  const next = (state.versionCounters.get(id) ?? 0) + 1;
  state.versionCounters.set(id, next);
  return next;
}
