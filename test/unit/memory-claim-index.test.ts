/**
 * The memory store claims from its job index (ready lanes per tenant, priority and retry-ness,
 * read only up to the claim's size). These schedules check each claim against the pick the store
 * made before it had the index: every job of the state scanned, then `inClaimOrder`. Tenants,
 * priorities, backoffs, expired leases, hand-backs, cancellations and retry caps are drawn from a
 * seeded generator, so a failure replays from its seed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFakeClock } from '../../src/core/clock.ts';
import type { Job } from '../../src/core/model.ts';
import type { ClaimedJob, ClaimRequest } from '../../src/core/ports/jobs.ts';
import { comparePlain, inClaimOrder } from '../../src/stores/shared/claim-order.ts';
import { createContext } from '../../src/stores/memory/context.ts';
import type { MemoryState } from '../../src/stores/memory/state.ts';
import { buildMemoryStoreOn } from '../../src/stores/memory/store.ts';
import { runRequest, stageJob } from '../conformance/fixture.ts';
import { createCountingIds, createPrng, type Prng } from '../support/simulation/prng.ts';

const QUEUE = 'demo.a';

/** The ids a claim of `total` jobs from QUEUE takes by scanning every job (the store's pick before its index). */
function scannedPick(state: MemoryState, total: number, cap: number | undefined): string[] {
  const now = state.clock.now();
  const jobs = [...state.jobs.values()].filter((j) => j.queue === QUEUE);
  const due = jobs.filter((j) => (j.state === 'ready' ? j.availableAt <= now : j.state === 'leased' && (j.leaseUntil ?? 0) <= now));
  const running = jobs.filter((j) => j.state === 'leased' && (j.leaseUntil ?? 0) > now && j.attempt >= 2).length;
  const budget = cap === undefined ? total : Math.max(0, cap - running);
  const isLimited = (j: Job): boolean => (cap === undefined ? j.state === 'leased' : j.attempt >= 1);
  const limited = due.filter(isLimited).sort(comparePlain).slice(0, budget);
  return inClaimOrder([...due.filter((j) => !isLimited(j)), ...limited], (j) => j)
    .slice(0, total)
    .map((j) => j.id);
}

/** Hands a claimed job back in one of the ways the engine does, or keeps it (its lease will expire). */
async function settle(store: ReturnType<typeof buildMemoryStoreOn>, claimed: ClaimedJob, prng: Prng): Promise<void> {
  const lease = { jobId: claimed.job.id, token: claimed.job.leaseToken ?? '' };
  const error = { class: 'transient' as const, code: 'X', message: 'x' };
  switch (prng.int(5)) {
    case 0:
      await store.jobs.commit([{ type: 'complete', lease, output: null, durationMs: 1, next: null }]);
      return;
    case 1:
      await store.jobs.commit([{ type: 'fail', lease, error, durationMs: 1, decision: { action: 'retry', delayMs: prng.pick([0, 500, 3000]) } }]);
      return;
    case 2:
      await store.jobs.release([{ ...lease, delayMs: prng.pick([0, 1000]) }]);
      return;
    default:
      return;
  }
}

async function runSchedule(seed: number, steps: number): Promise<number> {
  const prng = createPrng(seed);
  const clock = createFakeClock();
  const ctx = createContext(clock, createCountingIds(clock));
  const store = buildMemoryStoreOn(ctx);
  await store.migrate();
  let claims = 0;
  for (let step = 0; step < steps; step++) {
    const action = prng.weighted([3, 4, 2, 1, 1]);
    if (action === 0) {
      const requests = Array.from({ length: prng.between(1, 4) }, () =>
        runRequest({ tenant: prng.pick([undefined, 't1', 't2', 't3']), firstJob: stageJob('a', { priority: prng.int(3) }) }),
      );
      await store.jobs.submit(requests);
    } else if (action === 1) {
      const total = prng.between(1, 6);
      const cap = prng.chance(0.4) ? prng.int(3) : undefined;
      const request: ClaimRequest = { queue: QUEUE, workerId: 'w', limit: total, leaseMs: prng.pick([500, 2000]), ...(cap === undefined ? {} : { maxRetriesRunning: cap }) };
      const expected = scannedPick(ctx.state, total, cap);
      const claimed = await store.jobs.claim([request]);
      assert.deepEqual(
        claimed.map((c) => c.job.id),
        expected,
        `seed ${seed}, step ${step}: claim of ${total}${cap === undefined ? '' : ` capped at ${cap}`}`,
      );
      claims += 1;
      for (const job of claimed) await settle(store, job, prng);
    } else if (action === 2) {
      await clock.advance(prng.pick([100, 700, 2500]));
    } else if (action === 3) {
      await store.jobs.reap();
    } else {
      const runs = [...ctx.state.runs.values()].filter((r) => r.status === 'queued' || r.status === 'running');
      if (runs.length > 0) await store.operator.cancelRun(prng.pick(runs).id, 'drawn');
    }
  }
  await store.close();
  return claims;
}

describe('memory store claims from its job index', () => {
  it('takes exactly the jobs a scan of every job picks, over seeded schedules of tenants, priorities, retries and caps', async () => {
    let claims = 0;
    for (let seed = 1; seed <= 20; seed++) claims += await runSchedule(seed, 150);
    assert.ok(claims > 500, `the schedules claimed ${claims} times`);
  });

  it('takes the same jobs from a backlog of 3,000 in one lane while it is claimed from the front, added to and cut in the middle', async () => {
    const prng = createPrng(7);
    const clock = createFakeClock();
    const ctx = createContext(clock, createCountingIds(clock));
    const store = buildMemoryStoreOn(ctx);
    await store.migrate();
    for (let i = 0; i < 30; i++) await store.jobs.submit(Array.from({ length: 100 }, () => runRequest()));
    let claimed = 0;
    while (claimed < 3_200) {
      const expected = scannedPick(ctx.state, 7, undefined);
      const jobs = await store.jobs.claim([{ queue: QUEUE, workerId: 'w', limit: 7, leaseMs: 60_000 }]);
      assert.deepEqual(
        jobs.map((c) => c.job.id),
        expected,
        `claim after ${claimed} jobs`,
      );
      if (jobs.length === 0) break;
      claimed += jobs.length;
      for (const job of jobs) await store.jobs.commit([{ type: 'complete', lease: { jobId: job.job.id, token: job.job.leaseToken ?? '' }, output: null, durationMs: 1, next: null }]);
      // New jobs land at the end of the lane; cancelled runs take theirs out of its middle.
      if (prng.chance(0.2)) await store.jobs.submit([runRequest()]);
      const queued = [...ctx.state.runs.values()].filter((r) => r.status === 'queued');
      if (queued.length > 0 && prng.chance(0.3)) await store.operator.cancelRun(prng.pick(queued).id, 'drawn');
      clock.advance(1);
    }
    assert.ok(claimed > 2_000, `claimed ${claimed} jobs`);
    assert.equal(scannedPick(ctx.state, 1, undefined).length, 0, 'the backlog is drained');
    await store.close();
  });
});
