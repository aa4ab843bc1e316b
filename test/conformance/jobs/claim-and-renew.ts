/**
 * Conformance, jobs sub-port: `jobs.claim` (order, leases, fences, concurrency, several queues in
 * one call, redelivery of expired leases) and `jobs.renew` (heartbeats).
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { ClaimedJob } from '../../../src/core/ports/jobs.ts';
import type { StoreHarness } from '../fixture.ts';
import { LEASE_MS, claim, claimOne, complete, fail, failure, leaseOf, onPipeline, snapshot, stageJob, storeTest, submit } from '../fixture.ts';

/** `jobs.claim`. */
export function describeClaim(harness: StoreHarness): void {
  describe('claim', () => {
    const test = storeTest(harness);

    test('claim takes at most limit jobs in priority, then availableAt, then id order', async ({ store, clock }) => {
      // x (priority 1) is made to wait for a backoff so its small id loses to later availableAts.
      const e = await submit(store, { firstJob: stageJob('a', { priority: 9 }) });
      const x = await submit(store, { firstJob: stageJob('a', { priority: 1 }) });
      const a = await submit(store, { firstJob: stageJob('a', { priority: 5 }) });
      const xClaim = await claimOne(store);
      assert.equal(xClaim.run.id, x.id);
      const retry = { action: 'retry', delayMs: 10 } as const;
      await fail(store, { lease: leaseOf(xClaim), error: failure('transient'), durationMs: 1, decision: retry });
      await clock.advance(1);
      const c = await submit(store, { firstJob: stageJob('a', { priority: 1 }) });
      const d = await submit(store, { firstJob: stageJob('a', { priority: 1 }) });
      await clock.advance(1);
      const b = await submit(store, { firstJob: stageJob('a', { priority: 1 }) });
      await clock.advance(20);
      // c and d tie on priority and availableAt: their job ids decide.
      const jobIdOf = async (runId: string): Promise<string> =>
        (await store.reads.listJobs({ runId, limit: 1 }))[0]?.id ?? '';
      const tied = (await jobIdOf(c.id)) < (await jobIdOf(d.id)) ? [c.id, d.id] : [d.id, c.id];

      const batch = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 4, leaseMs: LEASE_MS });
      assert.deepEqual(
        batch.map((cj) => cj.run.id),
        [...tied, b.id, x.id],
      );
      const rest = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 10, leaseMs: LEASE_MS });
      assert.deepEqual(
        rest.map((cj) => cj.run.id),
        [a.id, e.id],
      );
      const fences = [...batch, ...rest].map((cj) => cj.job.fence ?? -1);
      assert.equal(new Set(fences).size, fences.length, 'every claim gets its own fence');
      for (const fence of fences) assert.ok(fence > (xClaim.job.fence ?? Infinity), 'fences only grow');
    });

    test('a claimed job is leased with token, fence and leaseUntil, attempt 1, its run and stage running', async ({ store }) => {
      const run = await submit(store);
      await submit(store);
      const now = await store.now();
      const batch = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 5, leaseMs: LEASE_MS });
      assert.equal(batch.length, 2);
      assert.equal(new Set(batch.map((cj) => cj.job.leaseToken)).size, 2, 'each claim gets its own token');
      for (const cj of batch) {
        assert.equal(cj.job.state, 'leased');
        assert.equal(cj.job.leaseOwner, 'w1');
        assert.equal(typeof cj.job.leaseToken, 'string');
        assert.equal(typeof cj.job.fence, 'number');
        assert.equal(cj.job.leaseUntil, now + LEASE_MS);
        assert.equal(cj.job.leaseMs, LEASE_MS);
        assert.equal(cj.job.attempt, 1);
        assert.equal(cj.job.redeliveries, 0);
        assert.equal(cj.redelivered, false);
        assert.equal(cj.exhausted, false);
        assert.equal(cj.ledgerOutput, undefined);
        assert.deepEqual(cj.outputs, {});
        assert.equal(cj.run.status, 'running');
        assert.deepEqual(await store.reads.getJob(cj.job.id), cj.job);
      }
      const detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'running');
      const stageA = detail?.stages[0];
      assert.equal(stageA?.status, 'running');
      assert.equal(stageA?.attempts, 1);
      assert.equal(stageA?.leaseOwner, 'w1');
      assert.equal(stageA?.leaseUntil, now + LEASE_MS);
      assert.equal(detail?.stages[1]?.status, 'pending');
    });

    test('eight concurrent claimers never claim the same job twice', async ({ store }) => {
      for (let i = 0; i < 50; i++) await submit(store);
      const rounds = await Promise.all(
        Array.from({ length: 8 }, (_, w) =>
          claim(store, { queue: 'demo.a', workerId: `w${w}`, limit: 10, leaseMs: LEASE_MS }),
        ),
      );
      const claimed: ClaimedJob[] = rounds.flat();
      assert.equal(claimed.length, 50);
      assert.equal(new Set(claimed.map((cj) => cj.job.id)).size, 50);
      assert.equal(new Set(claimed.map((cj) => cj.job.fence)).size, 50);
      for (const cj of claimed) {
        const stored = await store.reads.getJob(cj.job.id);
        assert.equal(stored?.leaseToken, cj.job.leaseToken, 'the stored lease is the one handed out');
        assert.equal(stored?.attempt, 1);
      }
      assert.deepEqual(await claim(store, { queue: 'demo.a', workerId: 'late', limit: 10, leaseMs: LEASE_MS }), []);
    });

    test('claim over several queues in one call respects each limit and pause and groups results in request order', async ({ store }) => {
      for (let i = 0; i < 3; i++) await submit(store);
      for (let i = 0; i < 3; i++) await submit(store, onPipeline('other'));
      for (let i = 0; i < 2; i++) await submit(store, onPipeline('third'));
      await store.operator.setQueuePaused('third.a', true);

      const request = (queue: string, limit: number) => ({ queue, workerId: 'w1', limit, leaseMs: LEASE_MS });
      const batch = await store.jobs.claim([request('other.a', 1), request('third.a', 5), request('demo.a', 2), request('empty.q', 3)]);
      assert.deepEqual(
        batch.map((cj) => cj.job.queue),
        ['other.a', 'demo.a', 'demo.a'],
      );
      assert.equal(new Set(batch.map((cj) => cj.job.fence)).size, 3, 'every claim gets its own fence');
      for (const cj of batch) assert.equal(cj.job.state, 'leased');

      const rest = await store.jobs.claim([request('demo.a', 5), request('other.a', 5), request('third.a', 0)]);
      assert.deepEqual(
        rest.map((cj) => cj.job.queue),
        ['demo.a', 'other.a', 'other.a'],
      );
      await store.operator.setQueuePaused('third.a', false);
      const third = await store.jobs.claim([request('third.a', 5), request('demo.a', 5)]);
      assert.deepEqual(
        third.map((cj) => cj.job.queue),
        ['third.a', 'third.a'],
      );
      assert.deepEqual(await store.jobs.claim([]), []);
    });

    test('a queue named twice in one claim call is served twice without handing a job out twice', async ({ store }) => {
      for (let i = 0; i < 3; i++) await submit(store);
      const request = (workerId: string, limit: number) => ({ queue: 'demo.a', workerId, limit, leaseMs: LEASE_MS });
      const batch = await store.jobs.claim([request('w1', 2), request('w2', 2)]);
      assert.deepEqual(
        batch.map((cj) => cj.job.leaseOwner),
        ['w1', 'w1', 'w2'],
      );
      assert.equal(new Set(batch.map((cj) => cj.job.id)).size, 3);
      for (const cj of batch) assert.equal((await store.reads.getJob(cj.job.id))?.leaseToken, cj.job.leaseToken);
    });

    test('an expired lease is reclaimed by another worker as attempt 2, redelivery 1, and the old token commits nothing', async ({ store, clock }) => {
      await submit(store);
      const first = await claimOne(store, 'demo.a', { workerId: 'w1', leaseMs: 10_000 });
      await clock.advance(10_000);
      const second = await claimOne(store, 'demo.a', { workerId: 'w2', leaseMs: 10_000 });
      assert.equal(second.job.id, first.job.id);
      assert.equal(second.job.attempt, 2);
      assert.equal(second.job.redeliveries, 1);
      assert.equal(second.redelivered, true, 'taking over an expired lease is reported as a redelivery');
      assert.equal(second.job.leaseOwner, 'w2');
      assert.notEqual(second.job.leaseToken, first.job.leaseToken);
      assert.ok((second.job.fence ?? 0) > (first.job.fence ?? Infinity));
      assert.equal((await store.reads.getRun(first.run.id))?.stages[0]?.attempts, 2);

      const before = await snapshot(store, first.run.id, first.job.id);
      const stale = leaseOf(first);
      assert.deepEqual(await complete(store, { lease: stale, output: 'x', durationMs: 1, next: stageJob('b') }), {
        outcome: 'lease_lost',
      });
      for (const decision of [{ action: 'dead_letter', rollback: null }, { action: 'fail', rollback: null }] as const) {
        assert.deepEqual(await fail(store, { lease: stale, error: failure('permanent'), durationMs: 1, decision }), {
          outcome: 'lease_lost',
        });
      }
      assert.deepEqual(await store.jobs.renew([stale]), [{ status: 'lost' }]);
      assert.equal(await store.jobs.release([stale]), 0);
      assert.deepEqual(await snapshot(store, first.run.id, first.job.id), before);

      const commit = await complete(store, { lease: leaseOf(second), output: 'y', durationMs: 1, next: stageJob('b') });
      assert.deepEqual(commit, { outcome: 'committed', runStatus: 'running' });
    });

    test('a claim whose attempt exceeds maxAttempts after repeated lease expiry is flagged exhausted', async ({ store, clock }) => {
      const run = await submit(store, { firstJob: stageJob('a', { maxAttempts: 2 }) });
      const first = await claimOne(store, 'demo.a', { leaseMs: 1_000 });
      assert.equal(first.exhausted, false);
      await clock.advance(1_000);
      const second = await claimOne(store, 'demo.a', { leaseMs: 1_000 });
      assert.equal(second.job.attempt, 2);
      assert.equal(second.exhausted, false);
      await clock.advance(1_000);
      const third = await claimOne(store, 'demo.a', { leaseMs: 1_000 });
      assert.equal(third.job.attempt, 3);
      assert.equal(third.job.redeliveries, 2);
      assert.equal(third.exhausted, true);

      const result = await fail(store, {
        lease: leaseOf(third),
        error: failure('transient', 'LEASE_EXPIRED'),
        durationMs: 0,
        decision: { action: 'dead_letter', rollback: null },
      });
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'dead_lettered' });
      assert.equal((await store.reads.getRun(run.id))?.stages[0]?.status, 'dead_lettered');
    });
  });
}

/** `jobs.renew`. */
export function describeRenew(harness: StoreHarness): void {
  describe('renew', () => {
    const test = storeTest(harness);

    test('renew extends leaseUntil by the granted leaseMs and records progress', async ({ store, clock }) => {
      await submit(store);
      const claimed = await claimOne(store, 'demo.a', { leaseMs: 10_000 });
      await clock.advance(4_000);
      const now = await store.now();
      const statuses = await store.jobs.renew([{ ...leaseOf(claimed), progress: { done: 2 } }]);
      assert.deepEqual(statuses, [{ status: 'renewed', leaseUntil: now + 10_000 }]);
      assert.equal((await store.reads.getJob(claimed.job.id))?.leaseUntil, now + 10_000);
      const stage = (await store.reads.getRun(claimed.run.id))?.stages[0];
      assert.deepEqual(stage?.progress, { done: 2 });

      // Past the original expiry the renewed lease still holds.
      await clock.advance(8_000);
      assert.deepEqual(await claim(store, { queue: 'demo.a', workerId: 'w2', limit: 1, leaseMs: LEASE_MS }), []);
      const again = await store.jobs.renew([leaseOf(claimed)]);
      assert.equal(again[0]?.status, 'renewed');
    });

    test('renew says lost for a stale token, an unknown job and an expired lease, in input order', async ({ store, clock }) => {
      await submit(store);
      const claimed = await claimOne(store, 'demo.a', { leaseMs: 10_000 });
      const statuses = await store.jobs.renew([
        { jobId: claimed.job.id, token: 'not-the-token' },
        { jobId: 'job_unknown', token: 'x' },
        leaseOf(claimed),
      ]);
      assert.deepEqual(
        statuses.map((s) => s.status),
        ['lost', 'lost', 'renewed'],
      );
      await clock.advance(10_000);
      assert.deepEqual(await store.jobs.renew([leaseOf(claimed)]), [{ status: 'lost' }]);
    });
  });
}
