/**
 * Conformance, reads sub-port: queue stats, run and job listings, lookups and the ledger.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { QueueStats } from '../../src/core/model.ts';
import type { Store } from '../../src/core/ports/store.ts';
import type { StoreHarness } from './fixture.ts';
import { LEASE_MS, claim, claimOne, complete, fail, failJob, failure, leaseOf, onPipeline, storeTest, submit } from './fixture.ts';

const SUBJECT = 'asset_42';

/** Declares the reads sub-port's tests: `getRun`, `listRuns`, `getJob`, `listJobs`, `queueStats`, `readLedger`. */
export function describeReadsPort(harness: StoreHarness): void {
  describe('reads sub-port', () => {
    const test = storeTest(harness);

    test('queueStats counts ready, scheduled, leased, parked and dead jobs, the oldest ready age and paused queues', async ({ store, clock }) => {
      for (let i = 0; i < 6; i++) await submit(store);
      const claimed = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 4, leaseMs: LEASE_MS });
      assert.equal(claimed.length, 4);
      const [retried, parked, dead] = claimed;
      assert.ok(retried && parked && dead);
      const attempt = { error: failure('transient'), durationMs: 1 };
      await fail(store, { ...attempt, lease: leaseOf(retried), decision: { action: 'retry', delayMs: 60_000 } });
      await fail(store, { ...attempt, lease: leaseOf(parked), decision: { action: 'park' } });
      await fail(store, { ...attempt, lease: leaseOf(dead), decision: { action: 'dead_letter', rollback: null } });
      await store.operator.setQueuePaused('idle.q', true);
      await clock.advance(1_500);

      const stats = await store.reads.queueStats();
      const names = stats.map((s) => s.queue);
      assert.deepEqual(names, [...names].sort(), 'listed by name');
      const expected: QueueStats[] = [
        { queue: 'demo.a', paused: false, ready: 2, scheduled: 1, leased: 1, parked: 1, dead: 1, oldestReadyAgeMs: 1_500 },
        { queue: 'idle.q', paused: true, ready: 0, scheduled: 0, leased: 0, parked: 0, dead: 0, oldestReadyAgeMs: 0 },
      ];
      assert.deepEqual(stats, expected);

      await store.operator.setQueuePaused('demo.a', true);
      const paused = (await store.reads.queueStats()).find((s) => s.queue === 'demo.a');
      assert.equal(paused?.paused, true);
    });

    test('listRuns lists newest first and filters by pipeline, status and before', async ({ store, clock }) => {
      const d1 = await submit(store);
      await clock.advance(1);
      const o1 = await submit(store, onPipeline('other'));
      await clock.advance(1);
      const d2 = await submit(store);
      await clock.advance(1);
      const d3 = await submit(store);
      await store.operator.cancelRun(d2.id, 'test');

      const ids = async (query: Parameters<typeof store.reads.listRuns>[0]): Promise<string[]> =>
        (await store.reads.listRuns(query)).map((r) => r.id);
      assert.deepEqual(await ids({ limit: 10 }), [d3.id, d2.id, o1.id, d1.id]);
      assert.deepEqual(await ids({ limit: 2 }), [d3.id, d2.id]);
      assert.deepEqual(await ids({ pipeline: 'demo', limit: 10 }), [d3.id, d2.id, d1.id]);
      assert.deepEqual(await ids({ status: 'cancelled', limit: 10 }), [d2.id]);
      assert.deepEqual(await ids({ status: 'queued', limit: 10 }), [d3.id, o1.id, d1.id]);
      assert.deepEqual(await ids({ before: d2.id, limit: 10 }), [o1.id, d1.id]);
      assert.deepEqual(await ids({ pipeline: 'demo', before: d3.id, limit: 1 }), [d2.id]);
    });

    test('listRuns by subjectId lists the subject\'s runs of every pipeline newest first, with the other filters', async ({ store, clock }) => {
      const subject = (id: string, version: number) => ({ subjectId: id, subjectVersion: version });
      const d1 = await submit(store, subject(SUBJECT, 1));
      await clock.advance(1);
      const o1 = await submit(store, { ...onPipeline('other'), ...subject(SUBJECT, 1) });
      await clock.advance(1);
      const t1 = await submit(store, subject('asset_t', 1));
      await clock.advance(1);
      await submit(store);
      await clock.advance(1);
      const d2 = await submit(store, subject(SUBJECT, 2));

      const ids = async (query: Omit<Parameters<Store['reads']['listRuns']>[0], 'limit'> & { limit?: number }): Promise<string[]> =>
        (await store.reads.listRuns({ limit: 10, ...query })).map((r) => r.id);
      assert.deepEqual(await ids({ subjectId: SUBJECT }), [d2.id, o1.id, d1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, pipeline: 'demo' }), [d2.id, d1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, status: 'superseded' }), [d1.id], 'v2 superseded v1 of demo');
      assert.deepEqual(await ids({ subjectId: SUBJECT, status: 'queued' }), [d2.id, o1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, pipeline: 'other', status: 'queued' }), [o1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, pipeline: 'other', status: 'superseded' }), []);
      assert.deepEqual(await ids({ subjectId: SUBJECT, before: d2.id, limit: 1 }), [o1.id]);
      assert.deepEqual(await ids({ subjectId: SUBJECT, limit: 2 }), [d2.id, o1.id]);
      assert.deepEqual(await ids({ subjectId: 'asset_t' }), [t1.id]);
      assert.deepEqual(await ids({ subjectId: 'asset_unknown' }), []);
    });

    test('listJobs lists oldest first and filters by queue, run and state', async ({ store, clock }) => {
      const r1 = await submit(store);
      await clock.advance(1);
      const r2 = await submit(store);
      await clock.advance(1);
      const r3 = await submit(store, onPipeline('other'));
      const held = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 1, leaseMs: LEASE_MS });
      assert.equal(held[0]?.run.id, r1.id);

      const runIds = async (query: Parameters<typeof store.reads.listJobs>[0]): Promise<string[]> =>
        (await store.reads.listJobs(query)).map((j) => j.runId);
      assert.deepEqual(await runIds({ limit: 10 }), [r1.id, r2.id, r3.id]);
      assert.deepEqual(await runIds({ queue: 'demo.a', limit: 10 }), [r1.id, r2.id]);
      assert.deepEqual(await runIds({ state: 'leased', limit: 10 }), [r1.id]);
      assert.deepEqual(await runIds({ state: 'ready', limit: 10 }), [r2.id, r3.id]);
      assert.deepEqual(await runIds({ runId: r3.id, limit: 10 }), [r3.id]);
      assert.deepEqual(await runIds({ queue: 'demo.a', state: 'ready', limit: 10 }), [r2.id]);
      assert.deepEqual(await runIds({ limit: 1 }), [r1.id]);
    });

    test('getJob reads the job as it stands: ready, then leased by a claim, then ready again with its error, then gone once done', async ({ store }) => {
      const run = await submit(store);
      const [ready] = await store.reads.listJobs({ runId: run.id, limit: 1 });
      assert.ok(ready);
      assert.deepEqual(await store.reads.getJob(ready.id), ready);

      const claimed = await claimOne(store);
      assert.equal(claimed.job.id, ready.id);
      assert.deepEqual(await store.reads.getJob(ready.id), claimed.job);

      const error = failure('transient', 'FLAKY');
      await failJob(store, claimed, { action: 'retry', delayMs: 0 }, error);
      const retried = await store.reads.getJob(ready.id);
      assert.deepEqual(
        [retried?.state, retried?.attempt, retried?.lastError, retried?.leaseToken, retried?.leaseUntil],
        ['ready', 1, error, null, null],
      );

      const again = await claimOne(store);
      assert.equal((await complete(store, { lease: leaseOf(again), output: 1, durationMs: 1, next: null })).outcome, 'committed');
      assert.equal(await store.reads.getJob(ready.id), null, 'a completed job is deleted');
    });

    test('getRun and getJob return null for unknown ids, readLedger an empty list', async ({ store }) => {
      assert.equal(await store.reads.getRun('run_unknown'), null);
      assert.equal(await store.reads.getJob('job_unknown'), null);
      assert.deepEqual(await store.reads.readLedger('run_unknown'), []);
    });
  });
}
