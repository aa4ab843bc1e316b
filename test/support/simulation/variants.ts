/**
 * The stores a schedule runs on: the memory store as shipped, and test-only broken variants that
 * prove the simulation catches what it is for. A variant is built over the same context with
 * `buildMemoryStoreOn`; only its `jobs.commit` (or `jobs.claim`) differs, and production code is
 * unchanged.
 */
import type { Clock } from '../../../src/core/clock.ts';
import type { IdGenerator } from '../../../src/core/ids.ts';
import type { Job } from '../../../src/core/model.ts';
import type { LeaseRef } from '../../../src/core/ports/jobs.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import { createContext, type MemoryContext } from '../../../src/stores/memory/context.ts';
import { claimJobs } from '../../../src/stores/memory/jobs/claim.ts';
import { commit } from '../../../src/stores/memory/jobs/commit.ts';
import type { MemoryState } from '../../../src/stores/memory/state.ts';
import { buildMemoryStoreOn } from '../../../src/stores/memory/store.ts';

/**
 * Which store a schedule drives: `correct`, the memory store as shipped; broken on purpose (each
 * names what its commit gets wrong): `commit-ignores-token` skips the token comparison of the
 * fence (any token of a leased job commits), `commit-ignores-expiry` skips its expiry (an expired
 * lease nobody took over still commits), `commit-forgets-ledger` writes no ledger entry for a
 * completion (what `kiln verify`'s ledger check is for); and one broken claim,
 * `claim-ignores-lease`, which takes leased jobs whose lease is still live.
 */
export const STORE_VARIANTS = ['correct', 'commit-ignores-token', 'commit-ignores-expiry', 'commit-forgets-ledger', 'claim-ignores-lease'] as const;
export type StoreVariant = (typeof STORE_VARIANTS)[number];

/** A store under simulation and the context whose state the checks read. */
export interface SimStore {
  ctx: MemoryContext;
  store: Store;
}

type CommitItems = Parameters<Store['jobs']['commit']>[0];
type CommitBody = (state: MemoryState, items: CommitItems) => ReturnType<typeof commit>;

/**
 * The shipped commit with the state's own lease check doctored for its duration: the presented
 * lease of a leased job is changed (`doctor`) before the honest check sees it.
 */
function commitWithLeaseCheck(doctor: (lease: LeaseRef, now: number, job: Job) => [LeaseRef, number]): CommitBody {
  return (state, items) => {
    const shipped = state.checkLease;
    state.checkLease = (lease, now) => {
      const job = state.jobs.get(lease.jobId);
      return job?.state === 'leased' ? shipped.call(state, ...doctor(lease, now, job)) : shipped.call(state, lease, now);
    };
    try {
      return commit(state, items);
    } finally {
      state.checkLease = shipped;
    }
  };
}

/** The commit of each broken commit variant. */
const BROKEN_COMMITS: Record<Exclude<StoreVariant, 'correct' | 'claim-ignores-lease'>, CommitBody> = {
  'commit-ignores-token': commitWithLeaseCheck((lease, now, job) => [{ jobId: lease.jobId, token: job.leaseToken ?? lease.token }, now]),
  'commit-ignores-expiry': commitWithLeaseCheck((lease, now, job) => [lease, Math.min(now, (job.leaseUntil ?? 0) - 1)]),
  'commit-forgets-ledger': (state, items) => {
    const kept = new Set(state.ledger.keys());
    const results = commit(state, items);
    for (const key of [...state.ledger.keys()]) if (!kept.has(key)) state.ledger.delete(key);
    return results;
  },
};

type ClaimRequests = Parameters<Store['jobs']['claim']>[0];

/**
 * The shipped claim, with every live lease of the requested queues made to look expired for its
 * duration (those it did not take over get their lease end back).
 */
function claimIgnoringLeases(state: MemoryState, requests: ClaimRequests): ReturnType<typeof claimJobs> {
  const now = state.clock.now();
  const queues = new Set(requests.map((r) => r.queue));
  const live = [...state.jobs.values()].filter((job) => job.state === 'leased' && queues.has(job.queue) && (job.leaseUntil ?? 0) > now);
  const ends = new Map(live.map((job) => [job, job.leaseUntil]));
  for (const job of live) job.leaseUntil = now;
  const claimed = claimJobs(state, requests);
  for (const [job, leaseUntil] of ends) if (job.leaseUntil === now) job.leaseUntil = leaseUntil;
  return claimed;
}

/** Opens the store of `variant` on `clock` and `ids`, migrated. */
export async function openSimStore(variant: StoreVariant, clock: Clock, ids: IdGenerator): Promise<SimStore> {
  const ctx = createContext(clock, ids);
  const honest = buildMemoryStoreOn(ctx);
  await honest.migrate();
  if (variant === 'correct') return { ctx, store: honest };
  if (variant === 'claim-ignores-lease') {
    return { ctx, store: { ...honest, jobs: { ...honest.jobs, claim: ctx.atomic((requests: ClaimRequests) => claimIgnoringLeases(ctx.state, requests)) } } };
  }
  const broken = BROKEN_COMMITS[variant];
  const brokenCommit = ctx.atomic((items: CommitItems) => broken(ctx.state, items));
  return { ctx, store: { ...honest, jobs: { ...honest.jobs, commit: brokenCommit } } };
}
