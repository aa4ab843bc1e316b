/**
 * Conformance, operator sub-port: park and resume, cancel, replay, pausing and draining queues.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ConflictError, NotFoundError } from '../../src/core/errors.ts';
import type { StoreHarness } from './fixture.ts';
import { LEASE_MS, assertRejectsWith, claim, claimNew, claimOne, complete, fail, failure, leaseOf, onPipeline, passStage, stageJob, storeTest, submit } from './fixture.ts';

/** Declares the operator sub-port's tests: `cancelRun`, `resumeRun`, `replayJob`, `setQueuePaused`, `drainQueue`. */
export function describeOperatorPort(harness: StoreHarness): void {
  describe('operator sub-port', () => {
    const test = storeTest(harness);

    test('park parks run and job (not claimable); resumeRun makes it claimable with attempt reset and keeps completed stages', async ({ store }) => {
      const b = await claimNew(store, 'b', { kept: true });
      const run = b.run;
      const error = failure('intervention', 'NEEDS_HUMAN');
      const parked = await fail(store, { lease: leaseOf(b), error, durationMs: 1, decision: { action: 'park' } });
      assert.deepEqual(parked, { outcome: 'committed', runStatus: 'parked' });
      assert.equal((await store.reads.getRun(run.id))?.run.status, 'parked');
      assert.equal((await store.reads.getJob(b.job.id))?.state, 'parked');
      assert.equal((await store.reads.getRun(run.id))?.stages[1]?.status, 'failed');
      assert.deepEqual(await claim(store, { queue: 'demo.b', workerId: 'w1', limit: 5, leaseMs: LEASE_MS }), []);

      const resumed = await store.operator.resumeRun(run.id);
      assert.equal(resumed.status, 'running');
      const job = await store.reads.getJob(b.job.id);
      assert.equal(job?.state, 'ready');
      assert.equal(job?.attempt, 0);
      const again = await claimOne(store, 'demo.b');
      assert.equal(again.job.id, b.job.id);
      assert.equal(again.job.attempt, 1);
      assert.deepEqual(again.outputs, { a: { kept: true } });
      const stageA = (await store.reads.getRun(run.id))?.stages[0];
      assert.equal(stageA?.status, 'succeeded');
      assert.deepEqual(stageA?.output, { kept: true });
    });

    test('resumeRun of a run that is not parked is INVALID_TRANSITION, of an unknown run NotFoundError', async ({ store }) => {
      const queued = await submit(store);
      await assertRejectsWith(store.operator.resumeRun(queued.id), ConflictError, 'INVALID_TRANSITION');
      await claimOne(store);
      await assertRejectsWith(store.operator.resumeRun(queued.id), ConflictError, 'INVALID_TRANSITION');
      await assertRejectsWith(store.operator.resumeRun('run_unknown'), NotFoundError, 'NOT_FOUND');
    });

    test('cancelRun cancels the run, deletes its jobs, skips unfinished stages, and tells the lease holder cancelled', async ({ store }) => {
      const holder = await claimNew(store, 'b');
      const run = holder.run;

      const cancelled = await store.operator.cancelRun(run.id, 'operator said stop');
      assert.equal(cancelled.status, 'cancelled');
      assert.equal(cancelled.error?.code, 'CANCELLED');
      assert.equal(cancelled.error?.message, 'operator said stop');
      assert.notEqual(cancelled.finishedAt, null);
      const detail = await store.reads.getRun(run.id);
      assert.deepEqual(detail?.run, cancelled);
      assert.deepEqual(
        detail?.stages.map((s) => s.status),
        ['succeeded', 'skipped', 'skipped'],
      );
      assert.deepEqual(await store.reads.listJobs({ runId: run.id, limit: 10 }), []);

      assert.deepEqual(await store.jobs.renew([leaseOf(holder)]), [{ status: 'cancelled' }]);
      assert.deepEqual(
        await complete(store, { lease: leaseOf(holder), output: 1, durationMs: 1, next: stageJob('c') }),
        { outcome: 'cancelled' },
      );
      const decision = { action: 'retry', delayMs: 0 } as const;
      assert.deepEqual(
        await fail(store, { lease: leaseOf(holder), error: failure('transient'), durationMs: 1, decision }),
        { outcome: 'cancelled' },
      );
      assert.equal((await store.reads.readLedger(run.id)).length, 1);
    });

    test('cancelRun of a succeeded run is INVALID_TRANSITION', async ({ store }) => {
      const run = await submit(store, { stages: ['a'] });
      await passStage(store, 'a', null);
      await assertRejectsWith(store.operator.cancelRun(run.id, 'too late'), ConflictError, 'INVALID_TRANSITION');
      assert.equal((await store.reads.getRun(run.id))?.run.status, 'succeeded');
    });

    test('cancelRun of an unknown run is NotFoundError', async ({ store }) => {
      await assertRejectsWith(store.operator.cancelRun('run_unknown', 'why'), NotFoundError, 'NOT_FOUND');
    });

    test('replayJob makes the dead job of a dead-lettered run ready with attempt 0 and its run running, and the run can then succeed', async ({ store }) => {
      const run = await submit(store, { stages: ['a', 'b'] });
      const claimed = await claimOne(store);
      // Attempts that ran out on transient errors: a replay may succeed.
      await fail(store, {
        lease: leaseOf(claimed),
        error: failure('transient'),
        durationMs: 1,
        decision: { action: 'dead_letter', rollback: null },
      });
      const now = await store.now();
      const replayed = await store.operator.replayJob(claimed.job.id);
      assert.equal(replayed.state, 'ready');
      assert.equal(replayed.attempt, 0);
      assert.equal(replayed.availableAt, now);
      const detail = await store.reads.getRun(run.id);
      assert.equal(detail?.run.status, 'running');
      assert.equal(detail?.run.error, null);
      assert.equal(detail?.stages[0]?.status, 'pending');

      const again = await claimOne(store);
      assert.equal(again.job.attempt, 1);
      await complete(store, { lease: leaseOf(again), output: 'ok', durationMs: 1, next: stageJob('b') });
      await passStage(store, 'b', null);
      assert.equal((await store.reads.getRun(run.id))?.run.status, 'succeeded');
    });

    test('replayJob of a job that is not dead is INVALID_TRANSITION, of an unknown job NotFoundError', async ({ store }) => {
      await submit(store);
      const [job] = await store.reads.listJobs({ limit: 1 });
      assert.ok(job);
      await assertRejectsWith(store.operator.replayJob(job.id), ConflictError, 'INVALID_TRANSITION');
      await claimOne(store);
      await assertRejectsWith(store.operator.replayJob(job.id), ConflictError, 'INVALID_TRANSITION');
      await assertRejectsWith(store.operator.replayJob('job_unknown'), NotFoundError, 'NOT_FOUND');
    });

    test('a paused queue yields nothing and resuming it restores claims', async ({ store }) => {
      await submit(store);
      await store.operator.setQueuePaused('demo.a', true);
      assert.deepEqual(await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 5, leaseMs: LEASE_MS }), []);
      await store.operator.setQueuePaused('demo.a', false);
      const claimed = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 5, leaseMs: LEASE_MS });
      assert.equal(claimed.length, 1);
    });

    test('setQueuePaused needs no queue to exist, pausing twice is one pause, and the pause holds for jobs that arrive later', async ({ store }) => {
      await store.operator.setQueuePaused('demo.a', true);
      await store.operator.setQueuePaused('demo.a', true);
      await submit(store);
      assert.deepEqual(await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 5, leaseMs: LEASE_MS }), []);
      assert.equal((await store.reads.queueStats()).find((s) => s.queue === 'demo.a')?.paused, true);
      await store.operator.setQueuePaused('demo.a', false);
      await store.operator.setQueuePaused('demo.a', false);
      assert.equal((await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 5, leaseMs: LEASE_MS })).length, 1);
      assert.equal((await store.reads.queueStats()).find((s) => s.queue === 'demo.a')?.paused, false);
    });

    test('drainQueue removes the ready jobs and cancels their runs, leaving leased jobs to finish', async ({ store }) => {
      await submit(store);
      await submit(store);
      await submit(store);
      await submit(store, onPipeline('other'));
      const holder = await claimOne(store);

      assert.equal(await store.operator.drainQueue('demo.a'), 2);
      const left = await store.reads.listJobs({ queue: 'demo.a', limit: 10 });
      assert.deepEqual(
        left.map((j) => j.id),
        [holder.job.id],
      );
      const cancelled = await store.reads.listRuns({ status: 'cancelled', limit: 10 });
      assert.equal(cancelled.length, 2);
      for (const run of cancelled) assert.equal(run.error?.message, 'queue drained');
      assert.equal((await store.reads.listJobs({ queue: 'other.a', limit: 10 })).length, 1);
      assert.equal((await store.reads.getRun(holder.run.id))?.run.status, 'running');

      const commit = await complete(store, { lease: leaseOf(holder), output: 1, durationMs: 1, next: stageJob('b') });
      assert.equal(commit.outcome, 'committed');
      assert.equal(await store.operator.drainQueue('demo.a'), 0);
    });
  });
}
