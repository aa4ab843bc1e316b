/**
 * The `versions` sub-port of the memory store: `allocate` hands out 1, 2, 3, ... per
 * `(scope, key)`. One synchronous operation, so no value is ever handed out twice.
 */
import type { VersionsPort } from '../../core/ports/versions.ts';
import type { MemoryContext } from './context.ts';
import { pairKey } from './rows.ts';
import type { MemoryState } from './state.ts';

/** Increments the counter `(scope, key)` and returns its new value (1 on first use). */
function allocateVersion(state: MemoryState, scope: string, key: string): number {
  const id = pairKey(scope, key);
  const next = (state.versionCounters.get(id) ?? 0) + 1;
  state.versionCounters.set(id, next);
  return next;
}

/** Race-free counters of the state. */
export function createVersionsPort(ctx: MemoryContext): VersionsPort {
  const { state } = ctx;
  return { allocate: ctx.atomic((scope, key) => allocateVersion(state, scope, key)) };
}
