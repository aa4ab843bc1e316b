/**
 * The stores a schedule runs on: the memory store as shipped, and test-only broken variants that
 * prove the simulation catches what it is for. A variant is built over the same context with
 * `buildMemoryStoreOn`; only its `jobs.commit` differs, and production code is unchanged.
 */
import type { Clock } from '../../../src/core/clock.ts';
import type { IdGenerator } from '../../../src/core/ids.ts';
import type { LeaseRef } from '../../../src/core/ports/jobs.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import { createContext, type MemoryContext } from '../../../src/stores/memory/context.ts';
import { commit } from '../../../src/stores/memory/jobs/commit.ts';
import type { LeaseCheck, MemoryState } from '../../../src/stores/memory/state.ts';
import { buildMemoryStoreOn } from '../../../src/stores/memory/store.ts';

/**
 * Which store a schedule drives: `correct`, the memory store as shipped; broken on purpose,
 * `commit-ignores-token` (commits skip the token comparison of the fence: any token of a leased
 * job commits) and `commit-ignores-expiry` (commits skip its expiry: an expired lease nobody took
 * over still commits).
 */
export const STORE_VARIANTS = ['correct', 'commit-ignores-token', 'commit-ignores-expiry'] as const;
export type StoreVariant = (typeof STORE_VARIANTS)[number];

/** A store under simulation and the context whose state the checks read. */
export interface SimStore {
  ctx: MemoryContext;
  store: Store;
}

/**
 * The state's own lease check with one of its conditions skipped: the presented lease of a
 * leased job is doctored (its token replaced by the current one, or its time put before expiry)
 * before the honest check sees it.
 */
function flawedLeaseCheck(state: MemoryState, flaw: Exclude<StoreVariant, 'correct'>): (lease: LeaseRef, now: number) => LeaseCheck {
  const honest = state.checkLease.bind(state);
  return (lease, now) => {
    const job = state.jobs.get(lease.jobId);
    if (job?.state !== 'leased') return honest(lease, now);
    if (flaw === 'commit-ignores-token') return honest({ jobId: lease.jobId, token: job.leaseToken ?? lease.token }, now);
    return honest(lease, Math.min(now, (job.leaseUntil ?? 0) - 1));
  };
}

/** Opens the store of `variant` on `clock` and `ids`, migrated. */
export async function openSimStore(variant: StoreVariant, clock: Clock, ids: IdGenerator): Promise<SimStore> {
  const ctx = createContext(clock, ids);
  const honest = buildMemoryStoreOn(ctx);
  await honest.migrate();
  if (variant === 'correct') return { ctx, store: honest };
  const { state } = ctx;
  const flawed = flawedLeaseCheck(state, variant);
  const brokenCommit = ctx.atomic((items: Parameters<Store['jobs']['commit']>[0]) => {
    const shipped = state.checkLease;
    state.checkLease = flawed;
    try {
      return commit(state, items);
    } finally {
      state.checkLease = shipped;
    }
  });
  return { ctx, store: { ...honest, jobs: { ...honest.jobs, commit: brokenCommit } } };
}
