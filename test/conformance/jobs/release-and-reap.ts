/**
 * Conformance, jobs sub-port: `jobs.release` (held jobs handed back unworked) and `jobs.reap`
 * (expired leases made ready again).
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { StoreHarness } from '../fixture.ts';
import { LEASE_MS, claim, claimOne, failJob, leaseOf, onPipeline, storeTest, submit } from '../fixture.ts';

/** `jobs.release`. */
export function describeRelease(harness: StoreHarness): void {
  describe('release', () => {
    const test = storeTest(harness);

    test('release hands jobs back ready now without counting the attempt and ignores stale tokens', async ({ store, clock }) => {
      await submit(store);
      const claimed = await claimOne(store);
      await clock.advance(100);
      const now = await store.now();
      assert.equal(await store.jobs.release([leaseOf(claimed), { jobId: claimed.job.id, token: 'stale' }]), 1);
      const job = await store.reads.getJob(claimed.job.id);
      assert.equal(job?.state, 'ready');
      assert.equal(job?.attempt, 0);
      assert.equal(job?.availableAt, now);
      assert.equal(job?.leaseToken, null);
      assert.equal(job?.leaseUntil, null);
      const stage = (await store.reads.getRun(claimed.run.id))?.stages[0];
      assert.equal(stage?.status, 'pending');
      assert.equal(stage?.attempts, 0);
      assert.equal(await store.jobs.release([leaseOf(claimed)]), 0, 'a released lease is no longer held');

      const again = await claimOne(store, 'demo.a', { workerId: 'w2' });
      assert.equal(again.job.attempt, 1);
      assert.equal(again.job.redeliveries, 0);
    });

    test('release with a delay and a lock wait: ready later, attempt not counted, lockWaitSince kept across waits', async ({ store, clock }) => {
      await submit(store);
      const first = await claimOne(store);
      assert.equal(first.job.lockWaitSince, null);
      const waitStart = await store.now();
      assert.equal(await store.jobs.release([{ ...leaseOf(first), delayMs: 2_000, lockWait: true }]), 1);
      let job = await store.reads.getJob(first.job.id);
      assert.deepEqual([job?.state, job?.attempt, job?.availableAt, job?.lockWaitSince], ['ready', 0, waitStart + 2_000, waitStart]);
      assert.equal((await claim(store, { queue: 'demo.a', workerId: 'w2', limit: 1, leaseMs: LEASE_MS })).length, 0, 'not before its delay');
      await clock.advance(2_000);
      const second = await claimOne(store, 'demo.a', { workerId: 'w2' });
      assert.deepEqual([second.job.attempt, second.job.lockWaitSince], [1, waitStart], 'the wait is visible to the next claimer');
      await store.jobs.release([{ ...leaseOf(second), delayMs: 500, lockWait: true }]);
      assert.equal((await store.reads.getJob(first.job.id))?.lockWaitSince, waitStart, 'a second wait keeps the first start');
      await clock.advance(500);
      const third = await claimOne(store);
      await store.jobs.release([leaseOf(third)]);
      job = await store.reads.getJob(first.job.id);
      assert.deepEqual([job?.availableAt, job?.lockWaitSince], [await store.now(), null], 'any other hand-back ends the wait');
    });

    test('the commit of a failed attempt ends a lock wait', async ({ store }) => {
      await submit(store);
      await store.jobs.release([{ ...leaseOf(await claimOne(store)), lockWait: true }]);
      const claimed = await claimOne(store);
      assert.notEqual(claimed.job.lockWaitSince, null);
      await failJob(store, claimed, { action: 'retry', delayMs: 0 });
      assert.equal((await store.reads.getJob(claimed.job.id))?.lockWaitSince, null);
    });

    test('release of several leases hands back each one still held and counts only those; the other leases stay held', async ({ store }) => {
      for (let i = 0; i < 3; i++) await submit(store);
      const [x, y, z] = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 3, leaseMs: LEASE_MS });
      assert.ok(x && y && z);
      assert.equal(await store.jobs.release([]), 0, 'an empty list releases nothing');
      assert.equal(await store.jobs.release([leaseOf(x), { jobId: 'job_unknown', token: 'x' }, leaseOf(z)]), 2);
      const states = await Promise.all([x, y, z].map(async (cj) => (await store.reads.getJob(cj.job.id))?.state));
      assert.deepEqual(states, ['ready', 'leased', 'ready']);
      const stats = (await store.reads.queueStats()).find((s) => s.queue === 'demo.a');
      assert.deepEqual([stats?.ready, stats?.leased], [2, 1]);
      const renewed = await store.jobs.renew([leaseOf(x), leaseOf(y)]);
      assert.deepEqual(renewed.map((r) => r.status), ['lost', 'renewed'], 'a released lease is lost to its holder');
    });
  });
}

/** `jobs.reap`. */
export function describeReap(harness: StoreHarness): void {
  describe('reap', () => {
    const test = storeTest(harness);

    test('reap makes expired leases ready again and reports them per queue', async ({ store, clock }) => {
      await submit(store);
      await submit(store);
      await submit(store, onPipeline('other'));
      const short = { queue: 'demo.a', workerId: 'w1', limit: 10, leaseMs: 5_000 };
      const expiring = [
        ...(await claim(store, short)),
        ...(await claim(store, { ...short, queue: 'other.a' })),
      ];
      assert.equal(expiring.length, 3);
      await submit(store);
      const held = await claimOne(store, 'demo.a', { leaseMs: 60_000 });
      await clock.advance(5_000);

      const reaped = await store.jobs.reap();
      assert.deepEqual(reaped, { redelivered: { 'demo.a': 2, 'other.a': 1 } });
      for (const cj of expiring) {
        const job = await store.reads.getJob(cj.job.id);
        assert.equal(job?.state, 'ready');
        assert.equal(job?.redeliveries, 1);
        assert.equal(job?.leaseToken, null);
      }
      assert.equal((await store.reads.getJob(held.job.id))?.state, 'leased');
      assert.deepEqual(await store.jobs.reap(), { redelivered: {} });

      const reclaimed = await claim(store, { ...short, leaseMs: LEASE_MS });
      assert.equal(reclaimed.length, 2);
      for (const cj of reclaimed) {
        assert.equal(cj.job.attempt, 2);
        assert.equal(cj.job.redeliveries, 1, 'a reaped job is not counted again when claimed');
        assert.equal(cj.redelivered, false);
      }
    });
  });
}
