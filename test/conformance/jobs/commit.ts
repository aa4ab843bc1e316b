/**
 * Conformance, jobs sub-port: `jobs.commit` of one item at a time, fenced by its lease: stage
 * success, the ledger, retries, dead letters (replayable), permanent failures (the run ends
 * `failed`) and compensation.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ConflictError } from '../../../src/core/errors.ts';
import { jobIdempotencyKey } from '../../../src/core/keys.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import type { StoreHarness } from '../fixture.ts';
import { LEASE_MS, assertRejectsWith, claim, claimNew, claimOne, complete, fail, failJob, failure, leaseOf, rollbackJob, snapshot, stageJob, storeTest, submit } from '../fixture.ts';

/** Claims the rollback job of `stage` and completes it: the run's last compensation, so the run ends `failed`. */
async function completeCompensation(store: Store, stage: string): Promise<void> {
  const compensation = await claimOne(store, `demo.${stage}`);
  assert.equal(compensation.job.kind, 'rollback');
  const done = await complete(store, { lease: leaseOf(compensation), output: 'undone', durationMs: 1, next: null });
  assert.deepEqual(done, { outcome: 'committed', runStatus: 'failed' });
}

/** `jobs.commit` of single items: completions first, then failures and compensation. */
export function describeCommit(harness: StoreHarness): void {
  describe('commit', () => {
    const test = storeTest(harness);

    test('a completion records stage success, output, ledger entry and next job, and deletes the job, at once', async ({ store, clock }) => {
      const claimed = await claimNew(store);
      const run = claimed.run;
      await clock.advance(250);
      const now = await store.now();
      const output = { width: 640 };
      const result = await complete(store, { lease: leaseOf(claimed), output, durationMs: 250, next: stageJob('b') });
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'running' });

      assert.equal(await store.reads.getJob(claimed.job.id), null);
      const detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'running');
      assert.equal(detail?.run.currentStage, 'b');
      assert.equal(detail?.run.updatedAt, now, "the move to the next stage is the run's last change");
      const [listed] = await store.reads.listRuns({ limit: 10 });
      assert.deepEqual([listed?.id, listed?.currentStage, listed?.updatedAt], [run.id, 'b', now], 'a listing reads the run as getRun does');
      const [a, b] = detail?.stages ?? [];
      assert.equal(a?.status, 'succeeded');
      assert.deepEqual(a?.output, output);
      assert.equal(a?.durationMs, 250);
      assert.equal(a?.finishedAt, now);
      assert.equal(b?.status, 'pending');
      assert.deepEqual(await store.reads.readLedger(run.id), [
        { key: jobIdempotencyKey(run.id, 'a', 'stage'), runId: run.id, stage: 'a', kind: 'stage', output, completedAt: now },
      ]);
      const jobs = await store.reads.listJobs({ runId: run.id, limit: 10 });
      assert.deepEqual(
        jobs.map((j) => [j.stage, j.queue, j.state, j.attempt, j.idempotencyKey]),
        [['b', 'demo.b', 'ready', 0, jobIdempotencyKey(run.id, 'b', 'stage')]],
      );

      const again = await complete(store, { lease: leaseOf(claimed), output, durationMs: 1, next: stageJob('b') });
      assert.deepEqual(again, { outcome: 'lease_lost' }, 'a stage success is recorded once');
      const next = await claimOne(store, 'demo.b');
      assert.deepEqual(next.outputs, { a: output });
      assert.deepEqual([next.run.currentStage, next.run.updatedAt], ['b', now], 'the claimed job carries its run as read');
    });

    test('a claimed job of a stage that already succeeded (enqueued again) sees the other outputs, not its own stage\'s: that stage is running', async ({ store }) => {
      const a = await claimNew(store);
      await complete(store, { lease: leaseOf(a), output: { from: 'a' }, durationMs: 1, next: stageJob('b') });
      const b = await claimOne(store, 'demo.b');
      await complete(store, { lease: leaseOf(b), output: { from: 'b' }, durationMs: 1, next: stageJob('a') });
      const again = await claimOne(store, 'demo.a');
      assert.equal(again.run.id, a.run.id);
      assert.deepEqual(again.outputs, { b: { from: 'b' } });
      assert.equal((await store.reads.getRun(a.run.id))?.stages[0]?.status, 'running');
    });

    test('completing the last stage ends the run succeeded with no jobs left and the ledger in completion order', async ({ store }) => {
      const last = await claimNew(store, 'c');
      const run = last.run;
      const result = await complete(store, { lease: leaseOf(last), output: { done: 'c' }, durationMs: 5, next: null });
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'succeeded' });

      const detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'succeeded');
      assert.equal(detail?.run.currentStage, null);
      assert.notEqual(detail?.run.finishedAt, null);
      assert.deepEqual(
        detail?.stages.map((s) => s.status),
        ['succeeded', 'succeeded', 'succeeded'],
      );
      assert.deepEqual(await store.reads.listJobs({ runId: run.id, limit: 10 }), []);
      assert.deepEqual(
        (await store.reads.readLedger(run.id)).map((e) => e.stage),
        ['a', 'b', 'c'],
      );
    });

    test('a claimed job whose idempotency key is already in the ledger carries ledgerOutput, and the ledger keeps the first outcome', async ({ store }) => {
      // The port's only way to reach a ledger hit: a commit enqueues a duplicate of an effect
      // that already completed (here stage a again), as a duplicate enqueue would.
      const first = await claimNew(store);
      const run = first.run;
      const output = { first: true };
      await complete(store, { lease: leaseOf(first), output, durationMs: 1, next: stageJob('a') });

      const duplicate = await claimOne(store);
      assert.notEqual(duplicate.job.id, first.job.id);
      assert.equal(duplicate.job.idempotencyKey, first.job.idempotencyKey);
      assert.deepEqual(duplicate.ledgerOutput, output);

      const result = await complete(store, {
        lease: leaseOf(duplicate),
        output: { first: false },
        durationMs: 1,
        next: stageJob('b'),
      });
      assert.equal(result.outcome, 'committed');
      const ledger = await store.reads.readLedger(run.id);
      assert.equal(ledger.length, 1);
      assert.deepEqual(ledger[0]?.output, output);
    });

    test('a commit after the lease expired, before anyone reclaimed it, is refused and changes nothing', async ({ store, clock }) => {
      await submit(store);
      const claimed = await claimOne(store, 'demo.a', { leaseMs: 10_000 });
      await clock.advance(10_000);
      const before = await snapshot(store, claimed.run.id, claimed.job.id);
      const lease = leaseOf(claimed);
      assert.deepEqual(await complete(store, { lease, output: 'late', durationMs: 1, next: stageJob('b') }), {
        outcome: 'lease_lost',
      });
      const decision = { action: 'retry', delayMs: 0 } as const;
      assert.deepEqual(await fail(store, { lease, error: failure('transient'), durationMs: 1, decision }), {
        outcome: 'lease_lost',
      });
      assert.deepEqual(await snapshot(store, claimed.run.id, claimed.job.id), before);
    });

    test('a retry decision makes the job ready at now + delayMs: not claimable before, claimable after', async ({ store, clock }) => {
      const claimed = await claimNew(store);
      const run = claimed.run;
      const now = await store.now();
      const error = failure('transient', 'FLAKY');
      const result = await fail(store, {
        lease: leaseOf(claimed),
        error,
        durationMs: 7,
        decision: { action: 'retry', delayMs: 5_000 },
      });
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'running' });

      const job = await store.reads.getJob(claimed.job.id);
      assert.equal(job?.state, 'ready');
      assert.equal(job?.availableAt, now + 5_000);
      assert.equal(job?.attempt, 1);
      assert.deepEqual(job?.lastError, error);
      assert.equal(job?.leaseToken, null);
      const stage = (await store.reads.getRun(run.id))?.stages[0];
      assert.equal(stage?.status, 'failed');
      assert.deepEqual(stage?.error, error);

      const claimAll = { queue: 'demo.a', workerId: 'w1', limit: 10, leaseMs: LEASE_MS };
      assert.deepEqual(await claim(store, claimAll), []);
      await clock.advance(4_999);
      assert.deepEqual(await claim(store, claimAll), []);
      await clock.advance(1);
      const retried = await claim(store, claimAll);
      assert.equal(retried.length, 1);
      assert.equal(retried[0]?.job.attempt, 2);
    });

    test('a dead_letter decision makes the job dead, its stage dead_lettered and its run dead_lettered with the error', async ({ store }) => {
      const claimed = await claimNew(store);
      const run = claimed.run;
      const error = failure('transient', 'UPSTREAM_DOWN');
      const result = await fail(store, {
        lease: leaseOf(claimed),
        error,
        durationMs: 3,
        decision: { action: 'dead_letter', rollback: null },
      });
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'dead_lettered' });
      assert.equal((await store.reads.getJob(claimed.job.id))?.state, 'dead');
      const detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'dead_lettered');
      assert.deepEqual(detail?.run.error, error);
      assert.equal(detail?.stages[0]?.status, 'dead_lettered');
      assert.deepEqual(detail?.stages[0]?.error, error);
      assert.deepEqual(await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 5, leaseMs: LEASE_MS }), []);
    });

    test('a dead-lettered run has finishedAt (the commit time), and a replay that makes it run clears it again', async ({ store, clock }) => {
      const claimed = await claimNew(store);
      const run = claimed.run;
      await clock.advance(30);
      const now = await store.now();
      const result = await fail(store, { lease: leaseOf(claimed), error: failure('transient'), durationMs: 30, decision: { action: 'dead_letter', rollback: null } });
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'dead_lettered' });
      const dead = await store.reads.getRun(run.id);
      assert.equal(dead?.run.status, 'dead_lettered');
      assert.equal(dead?.run.finishedAt, now);
      await store.operator.replayJob(claimed.job.id);
      const replayed = await store.reads.getRun(run.id);
      assert.equal(replayed?.run.status, 'running');
      assert.equal(replayed?.run.finishedAt, null);
    });

    test('a fail decision keeps the job dead, records the stage failed and ends the run failed with the error', async ({ store, clock }) => {
      const claimed = await claimNew(store);
      const run = claimed.run;
      await clock.advance(40);
      const now = await store.now();
      const error = failure('permanent', 'ASSET_UNSUPPORTED_FORMAT');
      const result = await fail(store, { lease: leaseOf(claimed), error, durationMs: 40, decision: { action: 'fail', rollback: null } });
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'failed' });

      const job = await store.reads.getJob(claimed.job.id);
      assert.equal(job?.state, 'dead', 'kept for inspection');
      assert.deepEqual(job?.lastError, error);
      assert.equal(job?.leaseToken, null);
      const detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'failed');
      assert.deepEqual(detail?.run.error, error);
      assert.equal(detail?.run.currentStage, null);
      assert.equal(detail?.run.finishedAt, now);
      const [a, b] = detail?.stages ?? [];
      assert.deepEqual([a?.status, a?.error, a?.durationMs, a?.finishedAt, a?.rollbackStatus], ['failed', error, 40, now, null]);
      assert.equal(b?.status, 'pending', 'later stages never ran');
      assert.deepEqual(await store.reads.readLedger(run.id), []);

      await clock.advance(10 * LEASE_MS);
      assert.deepEqual(await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 5, leaseMs: LEASE_MS }), [], 'not claimable');
      assert.deepEqual(await store.jobs.reap(), { redelivered: {} });
      assert.equal((await store.reads.listRuns({ status: 'failed', limit: 10 }))[0]?.id, run.id);
      assert.deepEqual(await store.reads.listRuns({ status: 'dead_lettered', limit: 10 }), []);
      await assertRejectsWith(store.operator.replayJob(claimed.job.id), ConflictError, 'INVALID_TRANSITION');
      await assertRejectsWith(store.operator.cancelRun(run.id, 'too late'), ConflictError, 'INVALID_TRANSITION');
      assert.equal((await store.reads.getJob(claimed.job.id))?.state, 'dead', 'a refused replay changes nothing');
      assert.equal((await store.reads.getRun(run.id))?.run.status, 'failed');
    });

    test('a dead letter with a rollback enqueues it; its completion fails the run and replay is then RUN_COMPENSATED', async ({ store }) => {
      const b = await claimNew(store, 'b');
      const run = b.run;
      const result = await failJob(store, b, { action: 'dead_letter', rollback: rollbackJob('a') });
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'dead_lettered' });

      let detail = await store.reads.getRun(run.id);
      assert.equal(detail?.stages[0]?.status, 'succeeded');
      assert.equal(detail?.stages[0]?.rollbackStatus, 'pending');
      assert.equal(detail?.stages[1]?.status, 'dead_lettered');
      const ready = await store.reads.listJobs({ runId: run.id, state: 'ready', limit: 10 });
      assert.deepEqual(
        ready.map((j) => [j.kind, j.stage, j.queue, j.idempotencyKey]),
        [['rollback', 'a', 'demo.a', jobIdempotencyKey(run.id, 'a', 'rollback')]],
      );
      await assertRejectsWith(store.operator.replayJob(b.job.id), ConflictError, 'RUN_COMPENSATED');

      await completeCompensation(store, 'a');

      detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'failed');
      assert.notEqual(detail?.run.finishedAt, null);
      assert.equal(detail?.stages[0]?.status, 'succeeded');
      assert.equal(detail?.stages[0]?.rollbackStatus, 'succeeded');
      assert.deepEqual(
        (await store.reads.readLedger(run.id)).map((e) => [e.stage, e.kind]),
        [
          ['a', 'stage'],
          ['a', 'rollback'],
        ],
      );
      await assertRejectsWith(store.operator.replayJob(b.job.id), ConflictError, 'RUN_COMPENSATED');
    });

    test('a fail decision with a rollback enqueues it and keeps the run running with the error; its completion ends the run failed', async ({ store }) => {
      const b = await claimNew(store, 'b');
      const run = b.run;
      const error = failure('permanent', 'BAD_INPUT');
      const result = await failJob(store, b, { action: 'fail', rollback: rollbackJob('a') }, error);
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'running' });

      let detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'running', 'not ended while its compensation runs');
      assert.deepEqual(detail?.run.error, error);
      assert.equal(detail?.run.finishedAt, null);
      const stages = detail?.stages.map((st) => [st.status, st.rollbackStatus]);
      assert.deepEqual(stages, [['succeeded', 'pending'], ['failed', null], ['pending', null]]);
      assert.equal((await store.reads.getJob(b.job.id))?.state, 'dead');
      await assertRejectsWith(store.operator.replayJob(b.job.id), ConflictError, 'RUN_COMPENSATED');

      await completeCompensation(store, 'a');
      detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'failed');
      assert.deepEqual(detail?.run.error, error, 'the run keeps the error that failed it');
      assert.notEqual(detail?.run.finishedAt, null);
      assert.equal(detail?.stages[0]?.rollbackStatus, 'succeeded');
      await assertRejectsWith(store.operator.replayJob(b.job.id), ConflictError, 'RUN_COMPENSATED');
    });

    test('a fail decision on a rollback job marks that rollback dead_lettered and ends the run failed with its error', async ({ store }) => {
      const c = await claimNew(store, 'c');
      const run = c.run;
      await failJob(store, c, { action: 'fail', rollback: rollbackJob('b') }, failure('permanent'));
      const compensation = await claimOne(store, 'demo.b');
      assert.equal(compensation.job.kind, 'rollback');
      const error = failure('permanent', 'UNDO_IMPOSSIBLE');
      const result = await fail(store, { lease: leaseOf(compensation), error, durationMs: 1, decision: { action: 'fail', rollback: null } });
      assert.deepEqual(result, { outcome: 'committed', runStatus: 'failed' });

      const detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'failed');
      assert.deepEqual(detail?.run.error, error);
      assert.deepEqual(
        detail?.stages.map((st) => [st.status, st.rollbackStatus]),
        [
          ['succeeded', null],
          ['succeeded', 'dead_lettered'],
          ['failed', null],
        ],
      );
      assert.equal((await store.reads.getJob(compensation.job.id))?.state, 'dead');
      assert.deepEqual(await store.reads.listJobs({ runId: run.id, state: 'ready', limit: 10 }), []);
    });
  });
}
