/** How many locks `LocksPort.list` returns, the same in every store. */

/** Locks listed when the query names no limit. */
export const DEFAULT_LOCK_LIST_LIMIT = 100;
/** The most locks one listing returns. */
export const MAX_LOCK_LIST_LIMIT = 1_000;

/** The limit a listing applies: the default when absent, within 1..{@link MAX_LOCK_LIST_LIMIT}. */
export function clampLockListLimit(limit: number | undefined): number {
  return Math.min(Math.max(1, Math.floor(limit ?? DEFAULT_LOCK_LIST_LIMIT)), MAX_LOCK_LIST_LIMIT);
}
