/**
 * Conformance, jobs sub-port: `jobs.claim` is fair across tenants (measured by position: which
 * claim batch takes a job, never by time), priority still comes first, and a queue's cap on
 * retries running at once (`ClaimRequest.maxRetriesRunning`) holds retries back but never first
 * attempts.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Store } from '../../../src/core/ports/store.ts';
import type { ClaimedJob, ClaimRequest, SubmitRunRequest } from '../../../src/core/ports/jobs.ts';
import type { StoreHarness } from '../fixture.ts';
import { LEASE_MS, claim, complete, fail, failure, leaseOf, runRequest, stageJob, storeTest, submit } from '../fixture.ts';

/** Submits `count` runs of `demo` with these overrides, in batches (one transaction each). */
async function submitMany(store: Store, count: number, overrides: Partial<SubmitRunRequest>): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += 500) {
    const batch = Array.from({ length: Math.min(500, count - done) }, () => runRequest(overrides));
    ids.push(...(await store.jobs.submit(batch)).map((r) => r.run.id));
  }
  return ids;
}

const request = (limit: number, extra: Partial<ClaimRequest> = {}): ClaimRequest => ({
  queue: 'demo.a',
  workerId: 'w1',
  limit,
  leaseMs: LEASE_MS,
  ...extra,
});

/** Run ids of a claim batch, in claim order. */
async function claimRuns(store: Store, limit: number, extra: Partial<ClaimRequest> = {}): Promise<string[]> {
  return (await claim(store, request(limit, extra))).map((cj) => cj.run.id);
}

/**
 * Tenants of a claim batch, in claim order (jobs submitted in one batch share availableAt, so
 * their ids, not their submission order, decide among them: positions are compared by tenant).
 */
async function claimTenants(store: Store, limit: number): Promise<(string | null)[]> {
  return (await claim(store, request(limit))).map((cj) => cj.job.tenant);
}

/** Fairness across tenants and the retry cap of `jobs.claim`. */
export function describeClaimFairness(harness: StoreHarness): void {
  describe('claim fairness', () => {
    const test = storeTest(harness);

    test('one job of tenant B (and one without tenant) is in the first claim batch behind 10,000 older jobs of tenant A', async ({ store, clock }) => {
      await submitMany(store, 10_000, { tenant: 'A' });
      await clock.advance(1);
      const b = await submit(store, { tenant: 'B' });
      await clock.advance(1);
      const none = await submit(store);

      // Rank 0 of every tenant first (by availableAt: A's oldest, B, the tenant-less one), then A's rank 1, 2, ...
      const first = await claim(store, request(10));
      assert.deepEqual(
        first.map((cj) => cj.job.tenant),
        ['A', 'B', null, 'A', 'A', 'A', 'A', 'A', 'A', 'A'],
      );
      assert.equal(first[1]?.run.id, b.id);
      assert.equal(first[2]?.run.id, none.id);
      // Once B and the tenant-less job are served, the rest is A's.
      assert.deepEqual(await claimTenants(store, 10), Array(10).fill('A'));
    });

    test('a tenant arriving later is served in the next batch, not after the backlog', async ({ store, clock }) => {
      await submitMany(store, 1_000, { tenant: 'A' });
      assert.deepEqual(await claimTenants(store, 5), Array(5).fill('A'));
      await clock.advance(1);
      await submitMany(store, 3, { tenant: 'B' });
      // Among what is left, each tenant's oldest has rank 0: A's (older) then B's; then rank 1 of each.
      assert.deepEqual(await claimTenants(store, 4), ['A', 'B', 'A', 'B']);
    });

    test('priority still wins over fairness; ranks count within a tenant and priority', async ({ store, clock }) => {
      const p1 = { firstJob: stageJob('a', { priority: 1 }) };
      const b1 = await submit(store, { tenant: 'B', ...p1 });
      await clock.advance(1);
      const b2 = await submit(store, { tenant: 'B', ...p1 });
      await clock.advance(1);
      await submitMany(store, 3, { tenant: 'A' });
      await clock.advance(1);
      await submitMany(store, 2, { tenant: 'A', ...p1 });
      const label = (cj: ClaimedJob): string => (cj.job.tenant === 'A' ? `A${cj.job.priority}` : cj.run.id);

      // Priority 0 is only A's, so A takes it all first, however many batches it spans.
      assert.deepEqual((await claim(store, request(2))).map(label), ['A0', 'A0']);
      // Then priority 1 alternates: rank 0 of B (older) and A, then rank 1 of each.
      assert.deepEqual((await claim(store, request(10))).map(label), ['A0', b1.id, 'A1', b2.id, 'A1']);
    });

    test('a queue named twice in one call deals one fair order to its requests in turn', async ({ store, clock }) => {
      await submitMany(store, 4, { tenant: 'A' });
      await clock.advance(1);
      await submitMany(store, 2, { tenant: 'B' });
      const batch = await store.jobs.claim([request(3, { workerId: 'w1' }), request(3, { workerId: 'w2' })]);
      assert.deepEqual(
        batch.map((cj) => `${cj.job.leaseOwner}:${cj.job.tenant}`),
        ['w1:A', 'w1:B', 'w1:A', 'w2:B', 'w2:A', 'w2:A'],
      );
      assert.equal(new Set(batch.map((cj) => cj.job.id)).size, 6);
    });

    test('maxRetriesRunning caps leased retries of the queue while first attempts are still claimed', async ({ store, clock }) => {
      // Three jobs fail their first attempt and are ready again: retries (attempt 1).
      await submitMany(store, 3, {});
      const firstTries = await claim(store, request(3));
      assert.equal(firstTries.length, 3);
      for (const cj of firstTries) {
        const decision = { action: 'retry', delayMs: 0 } as const;
        await fail(store, { lease: leaseOf(cj), error: failure('transient'), durationMs: 1, decision });
      }
      const retries = firstTries.map((cj) => cj.run.id);
      await clock.advance(1);
      const fresh1 = await submit(store);
      await clock.advance(1);
      const fresh2 = await submit(store);

      // Cap 1, none running: the first retry (plain order) and every first attempt.
      const capped = await claim(store, request(10, { maxRetriesRunning: 1 }));
      assert.deepEqual(capped.map((cj) => [cj.run.id, cj.job.attempt]), [[retries[0], 2], [fresh1.id, 1], [fresh2.id, 1]]);

      // One retry running: the cap is reached, so the other two retries wait; a new first attempt does not.
      await clock.advance(1);
      const late = await submit(store);
      assert.deepEqual(await claimRuns(store, 10, { maxRetriesRunning: 1 }), [late.id]);
      assert.deepEqual(await claimRuns(store, 10, { maxRetriesRunning: 1 }), []);

      // The running retry commits: one slot frees, and only one of the two waiting retries goes.
      const running = capped[0];
      assert.ok(running);
      await complete(store, { lease: leaseOf(running), output: 'ok', durationMs: 1, next: null });
      assert.deepEqual(await claimRuns(store, 10, { maxRetriesRunning: 1 }), [retries[1]]);
      // A queue whose policy sets no cap takes the last one.
      assert.deepEqual(await claimRuns(store, 10), [retries[2]]);
    });

    test('eight concurrent claimers under one retry cap start no more retries than the cap in all', async ({ store }) => {
      await submitMany(store, 20, {});
      const firstTries = await claim(store, request(20));
      const retry = { action: 'retry', delayMs: 0 } as const;
      await store.jobs.commit(
        firstTries.map((cj) => ({ type: 'fail', lease: leaseOf(cj), error: failure('transient'), durationMs: 1, decision: retry }) as const),
      );
      const rounds = await Promise.all(Array.from({ length: 8 }, (_, w) => claim(store, request(10, { workerId: `w${w}`, maxRetriesRunning: 3 }))));
      const claimed = rounds.flat();
      assert.equal(claimed.length, 3);
      assert.equal(new Set(claimed.map((cj) => cj.job.id)).size, 3);
    });

    test('a redelivery after a crash is a retry, and an expired lease no longer counts as running', async ({ store, clock }) => {
      const crashed1 = await submit(store);
      await clock.advance(1);
      const crashed2 = await submit(store);
      const lost = await claim(store, request(2, { leaseMs: 1_000 }));
      assert.deepEqual(lost.map((cj) => cj.run.id), [crashed1.id, crashed2.id]);
      await clock.advance(1_000);
      const fresh = await submit(store);

      // Cap 0: the expired leases (attempt 1 already) are retries and stay put; the first attempt goes.
      assert.deepEqual(await claimRuns(store, 10, { maxRetriesRunning: 0 }), [fresh.id]);
      // Cap 1: the dead worker's leases expired, so no retry is running: one is taken over.
      const takeover = await claim(store, request(10, { maxRetriesRunning: 1 }));
      assert.deepEqual(takeover.map((cj) => [cj.run.id, cj.job.attempt, cj.redelivered]), [[crashed1.id, 2, true]]);
      // That one now runs as a retry: cap 1 is reached, cap 2 takes the other.
      assert.deepEqual(await claimRuns(store, 10, { maxRetriesRunning: 1 }), []);
      assert.deepEqual(await claimRuns(store, 10, { maxRetriesRunning: 2 }), [crashed2.id]);
    });
  });
}
