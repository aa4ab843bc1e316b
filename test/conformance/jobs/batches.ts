/**
 * Conformance, jobs sub-port: `jobs.commit` with several items (group commit): each item fenced
 * by its own lease and applied in order as if alone, results in input order.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { jobIdempotencyKey } from '../../../src/core/keys.ts';
import type { JsonValue } from '../../../src/core/model.ts';
import type { ClaimedJob, CommitItem } from '../../../src/core/ports/jobs.ts';
import type { StoreHarness } from '../fixture.ts';
import { LEASE_MS, claim, claimNew, claimOne, failure, leaseOf, rollbackJob, snapshot, stageJob, storeTest, submit } from '../fixture.ts';

/** A `complete` item for a claimed job. */
function completeItem(claimed: ClaimedJob, next: string | null, output: JsonValue = { done: claimed.job.stage }): CommitItem {
  return {
    type: 'complete',
    lease: leaseOf(claimed),
    output,
    durationMs: 2,
    next: next === null ? null : stageJob(next),
  };
}

/** `jobs.commit` batches. */
export function describeCommitBatches(harness: StoreHarness): void {
  describe('commit batches', () => {
    const test = storeTest(harness);

    test('a commit batch applies the valid completion and failure and refuses the stale completion alone, results in input order', async ({ store, clock }) => {
      // Each run is claimed right after its submission, so every claim takes that run's job.
      const firstJob = await claimNew(store);
      // The second run's job is claimed, expires and is reclaimed: the first token goes stale.
      const stale = await submit(store);
      const staleClaim = await claimOne(store, 'demo.a', { leaseMs: 1_000 });
      await clock.advance(1_000);
      const reclaimed = await claimOne(store, 'demo.a', { workerId: 'w2' });
      assert.equal(reclaimed.job.id, staleClaim.job.id);
      const failingJob = await claimNew(store);
      const before = await snapshot(store, stale.id, staleClaim.job.id);
      const now = await store.now();

      const error = failure('transient', 'FLAKY');
      const results = await store.jobs.commit([
        completeItem(firstJob, 'b', { w: 1 }),
        completeItem(staleClaim, 'b', { w: 'stale' }),
        { type: 'fail', lease: leaseOf(failingJob), error, durationMs: 3, decision: { action: 'retry', delayMs: 500 } },
      ]);
      assert.deepEqual(results, [
        { outcome: 'committed', runStatus: 'running' },
        { outcome: 'lease_lost' },
        { outcome: 'committed', runStatus: 'running' },
      ]);

      assert.deepEqual(await snapshot(store, stale.id, staleClaim.job.id), before, 'the refused item changed nothing');
      const firstDetail = await store.reads.getRun(firstJob.run.id);
      assert.equal(firstDetail?.stages[0]?.status, 'succeeded');
      assert.deepEqual(firstDetail?.stages[0]?.output, { w: 1 });
      assert.equal(firstDetail?.run.currentStage, 'b');
      assert.deepEqual(
        (await store.reads.listJobs({ runId: firstJob.run.id, limit: 10 })).map((j) => [j.stage, j.state]),
        [['b', 'ready']],
      );
      const retried = await store.reads.getJob(failingJob.job.id);
      assert.equal(retried?.state, 'ready');
      assert.equal(retried?.availableAt, now + 500);
      assert.deepEqual(retried?.lastError, error);
      assert.equal((await store.reads.getRun(failingJob.run.id))?.stages[0]?.status, 'failed');

      // The holder of the fresh lease still commits.
      assert.deepEqual(await store.jobs.commit([completeItem(reclaimed, 'b')]), [{ outcome: 'committed', runStatus: 'running' }]);
    });

    test('items of one batch touching the same run and stage behave as if committed one after another', async ({ store }) => {
      const one = await submit(store);
      const two = await submit(store);
      const [a1, a2] = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 2, leaseMs: LEASE_MS });
      assert.ok(a1 && a2);
      assert.deepEqual(
        [a1.run.id, a2.run.id].sort(),
        [one.id, two.id].sort(),
      );
      const results = await store.jobs.commit([
        completeItem(a1, 'b', 'one'),
        completeItem(a2, null, 'two'),
        // The same lease as the first item: that item already consumed it.
        { type: 'fail', lease: leaseOf(a1), error: failure('permanent'), durationMs: 1, decision: { action: 'fail', rollback: null } },
        completeItem(a1, 'c', 'again'),
      ]);
      assert.deepEqual(results, [
        { outcome: 'committed', runStatus: 'running' },
        { outcome: 'committed', runStatus: 'succeeded' },
        { outcome: 'lease_lost' },
        { outcome: 'lease_lost' },
      ]);

      const d1 = await store.reads.getRun(a1.run.id);
      assert.equal(d1?.run.status, 'running');
      assert.equal(d1?.run.currentStage, 'b');
      assert.equal(d1?.run.error, null);
      assert.deepEqual(
        d1?.stages.map((s) => [s.status, s.output]),
        [
          ['succeeded', 'one'],
          ['pending', null],
          ['pending', null],
        ],
      );
      assert.deepEqual(
        (await store.reads.listJobs({ runId: a1.run.id, limit: 10 })).map((j) => [j.stage, j.state]),
        [['b', 'ready']],
      );
      assert.deepEqual(
        (await store.reads.readLedger(a1.run.id)).map((e) => [e.key, e.output]),
        [[jobIdempotencyKey(a1.run.id, 'a', 'stage'), 'one']],
      );
      const d2 = await store.reads.getRun(a2.run.id);
      assert.equal(d2?.run.status, 'succeeded');
      assert.deepEqual(await store.reads.listJobs({ runId: a2.run.id, limit: 10 }), []);
    });

    test('a batch can dead-letter with a rollback and complete other runs; each result is that run\'s status after its item', async ({ store }) => {
      const b = await claimNew(store, 'b');
      const compensated = b.run;
      const plain = await submit(store);
      const a = await claimOne(store, 'demo.a');
      assert.equal(a.run.id, plain.id);
      const results = await store.jobs.commit([
        { type: 'fail', lease: leaseOf(b), error: failure('transient'), durationMs: 1, decision: { action: 'dead_letter', rollback: rollbackJob('a') } },
        completeItem(a, 'b'),
      ]);
      assert.deepEqual(results, [
        { outcome: 'committed', runStatus: 'dead_lettered' },
        { outcome: 'committed', runStatus: 'running' },
      ]);
      const detail = await store.reads.getRun(compensated.id);
      assert.equal(detail?.stages[0]?.rollbackStatus, 'pending');
      assert.equal(detail?.stages[1]?.status, 'dead_lettered');
      // The rollback of a and plain's b are both ready; each on its own queue.
      const rollback = await claimOne(store, 'demo.a');
      assert.equal(rollback.job.kind, 'rollback');
      assert.equal((await claimOne(store, 'demo.b')).run.id, plain.id);
    });

    test('a batch can fail one run permanently between completions of others; only that run ends failed', async ({ store }) => {
      for (let i = 0; i < 3; i++) await submit(store);
      const [x, y, z] = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 3, leaseMs: LEASE_MS });
      assert.ok(x && y && z);
      const error = failure('permanent', 'BAD_INPUT');
      const results = await store.jobs.commit([
        completeItem(x, 'b'),
        { type: 'fail', lease: leaseOf(y), error, durationMs: 1, decision: { action: 'fail', rollback: null } },
        completeItem(z, null),
      ]);
      assert.deepEqual(results, [
        { outcome: 'committed', runStatus: 'running' },
        { outcome: 'committed', runStatus: 'failed' },
        { outcome: 'committed', runStatus: 'succeeded' },
      ]);
      const failed = await store.reads.getRun(y.run.id);
      assert.deepEqual([failed?.run.status, failed?.run.error, failed?.stages[0]?.status], ['failed', error, 'failed']);
      assert.deepEqual(
        (await store.reads.listJobs({ runId: y.run.id, limit: 10 })).map((j) => j.state),
        ['dead'],
      );
      assert.equal((await claimOne(store, 'demo.b')).run.id, x.run.id);
    });

    test('twenty completions in one batch each record their stage and enqueue or end their own run', async ({ store }) => {
      for (let i = 0; i < 20; i++) await submit(store);
      const claimed = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 20, leaseMs: LEASE_MS });
      assert.equal(claimed.length, 20);
      const results = await store.jobs.commit(claimed.map((cj, i) => completeItem(cj, i % 2 === 0 ? 'b' : null, i)));
      assert.deepEqual(
        results.map((r) => (r.outcome === 'committed' ? r.runStatus : r.outcome)),
        claimed.map((_, i) => (i % 2 === 0 ? 'running' : 'succeeded')),
      );
      for (const [i, cj] of claimed.entries()) {
        const detail = await store.reads.getRun(cj.run.id);
        assert.equal(detail?.run.status, i % 2 === 0 ? 'running' : 'succeeded');
        assert.equal(detail?.stages[0]?.output, i);
        assert.deepEqual((await store.reads.readLedger(cj.run.id)).map((e) => e.output), [i]);
      }
      const next = await claim(store, { queue: 'demo.b', workerId: 'w1', limit: 50, leaseMs: LEASE_MS });
      assert.equal(next.length, 10);
      for (const cj of next) assert.deepEqual(cj.outputs, { a: claimed.findIndex((c) => c.run.id === cj.run.id) });
    });

    test('an empty commit batch returns no results', async ({ store }) => {
      assert.deepEqual(await store.jobs.commit([]), []);
    });
  });
}
