/**
 * Conformance, reads sub-port: queue stats, run and job listings, lookups, the ledger, failed
 * attempts and dead letters.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { QueueStats } from '../../src/core/model.ts';
import type { Store } from '../../src/core/ports/store.ts';
import type { StoreHarness } from './fixture.ts';
import { LEASE_MS, claim, claimNew, claimOne, complete, fail, failJob, failure, leaseOf, onPipeline, storeTest, submit } from './fixture.ts';

const SUBJECT = 'asset_42';

/**
 * Declares the reads sub-port's tests: `getRun`, `listRuns`, `getJob`, `listJobs`, `queueStats`,
 * `readLedger`, `listAttempts`, `listDeadLetters`.
 */
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

    test('listJobs and listDeadLetters filter by tenant: only jobs of that tenant\'s runs, none of a run without one', async ({ store, clock }) => {
      const a1 = await submit(store, { tenant: 'tenant-a' });
      await clock.advance(1);
      const b1 = await submit(store, { tenant: 'tenant-b' });
      await clock.advance(1);
      const none = await submit(store);
      await clock.advance(1);
      const a2 = await submit(store, { tenant: 'tenant-a' });
      const runIds = async (tenant: string): Promise<string[]> => (await store.reads.listJobs({ tenant, limit: 10 })).map((j) => j.runId);
      assert.deepEqual(await runIds('tenant-a'), [a1.id, a2.id]);
      assert.deepEqual(await runIds('tenant-b'), [b1.id]);
      assert.deepEqual(await runIds('tenant-c'), []);
      assert.deepEqual((await store.reads.listJobs({ tenant: 'tenant-a', limit: 1 })).map((j) => j.runId), [a1.id], 'the limit counts the tenant\'s jobs only');
      assert.deepEqual((await store.reads.listJobs({ tenant: 'tenant-a', runId: b1.id, limit: 10 })).length, 0);
      assert.ok((await store.reads.listJobs({ limit: 10 })).some((j) => j.runId === none.id), 'no tenant filter lists every job');

      // Dead letters: every run's job is claimed (in whatever order the store hands them out) and dead-lettered.
      const dead: Record<string, string> = {};
      for (let i = 0; i < 4; i++) {
        const claimed = await claimOne(store);
        await failJob(store, claimed, { action: 'dead_letter', rollback: null }, failure('transient', 'TIMEOUT'));
        dead[claimed.run.id] = claimed.job.id;
        await clock.advance(1);
      }
      const [newerA, olderA] = [dead[a1.id], dead[a2.id]].sort().reverse();
      const deadIds = async (query: Partial<Parameters<Store['reads']['listDeadLetters']>[0]>): Promise<string[]> =>
        (await store.reads.listDeadLetters({ limit: 10, ...query })).map((j) => j.id);
      assert.deepEqual(await deadIds({ tenant: 'tenant-a' }), [newerA, olderA]);
      assert.deepEqual(await deadIds({ tenant: 'tenant-b', code: 'TIMEOUT' }), [dead[b1.id]]);
      assert.deepEqual(await deadIds({ tenant: 'tenant-a', before: newerA, limit: 1 }), [olderA]);
      assert.deepEqual(await deadIds({ tenant: 'tenant-c' }), []);
      assert.equal((await deadIds({})).length, 4);
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

    test('getRun and getJob return null for unknown ids, readLedger and listAttempts an empty list', async ({ store }) => {
      assert.equal(await store.reads.getRun('run_unknown'), null);
      assert.equal(await store.reads.getJob('job_unknown'), null);
      assert.deepEqual(await store.reads.readLedger('run_unknown'), []);
      assert.deepEqual(await store.reads.listAttempts('run_unknown'), []);
    });

    test('listRuns filters by tenant and by creation time (after inclusive, before exclusive), with the other filters and the cursor', async ({ store, clock }) => {
      const t0 = await store.now();
      const a1 = await submit(store, { tenant: 'acme' });
      await clock.advance(60_000);
      const b1 = await submit(store, { tenant: 'bolt' });
      const o1 = await submit(store, { ...onPipeline('other'), tenant: 'acme' });
      await clock.advance(60_000);
      const a2 = await submit(store, { tenant: 'acme' });
      const n1 = await submit(store);
      await store.operator.cancelRun(a2.id, 'test');

      const ids = async (query: Omit<Parameters<Store['reads']['listRuns']>[0], 'limit'> & { limit?: number }): Promise<string[]> =>
        (await store.reads.listRuns({ limit: 10, ...query })).map((r) => r.id);
      assert.deepEqual(await ids({ tenant: 'acme' }), [a2.id, o1.id, a1.id]);
      assert.deepEqual(await ids({ tenant: 'acme', pipeline: 'demo' }), [a2.id, a1.id]);
      assert.deepEqual(await ids({ tenant: 'acme', status: 'cancelled' }), [a2.id]);
      assert.deepEqual(await ids({ tenant: 'acme', status: 'queued', before: o1.id }), [a1.id]);
      assert.deepEqual(await ids({ tenant: 'nobody' }), []);
      assert.deepEqual(await ids({ createdAfter: t0 + 60_000 }), [n1.id, a2.id, o1.id, b1.id]);
      assert.deepEqual(await ids({ createdBefore: t0 + 60_000 }), [a1.id]);
      assert.deepEqual(await ids({ createdAfter: t0 + 60_000, createdBefore: t0 + 120_000 }), [o1.id, b1.id]);
      assert.deepEqual(await ids({ createdAfter: t0 + 60_000, createdBefore: t0 + 120_000, limit: 1 }), [o1.id]);
      assert.deepEqual(await ids({ createdAfter: t0 + 60_000, before: o1.id }), [b1.id]);
      assert.deepEqual(await ids({ createdAfter: t0, tenant: 'acme', status: 'cancelled' }), [a2.id]);
      assert.deepEqual(await ids({ createdAfter: t0 + 120_001 }), []);
      assert.deepEqual(await ids({ createdBefore: t0 }), []);
    });

    test('listAttempts records every failed attempt in commit order, with its job, worker, error, decision and time; successes add nothing', async ({ store, clock }) => {
      const run = await submit(store);
      const first = await claimOne(store, 'demo.a', { workerId: 'worker-1' });
      const flaky = failure('transient', 'FLAKY');
      await clock.advance(100);
      await fail(store, { lease: leaseOf(first), error: flaky, durationMs: 40, decision: { action: 'retry', delayMs: 0 } });
      const t1 = await store.now();
      const second = await claimOne(store, 'demo.a', { workerId: 'worker-2' });
      await clock.advance(100);
      const gone = failure('transient', 'GONE');
      await fail(store, { lease: leaseOf(second), error: gone, durationMs: 7, decision: { action: 'dead_letter', rollback: null } });
      const t2 = await store.now();

      const base = { runId: run.id, jobId: first.job.id, stage: 'a', kind: 'stage', queue: 'demo.a' } as const;
      const expected = [
        { ...base, attempt: 1, workerId: 'worker-1', error: flaky, action: 'retry', durationMs: 40, failedAt: t1 },
        { ...base, attempt: 2, workerId: 'worker-2', error: gone, action: 'dead_letter', durationMs: 7, failedAt: t2 },
      ];
      assert.deepEqual(await store.reads.listAttempts(run.id), expected);

      await store.operator.replayJob(first.job.id);
      const third = await claimOne(store);
      await complete(store, { lease: leaseOf(third), output: 1, durationMs: 1, next: null });
      assert.deepEqual(await store.reads.listAttempts(run.id), expected, 'a success records no attempt');
      assert.deepEqual(await store.reads.listAttempts((await submit(store)).id), [], 'another run has its own history');
    });

    test('listDeadLetters lists the dead stage jobs of dead-lettered runs newest first, by code, queue and cursor', async ({ store, clock }) => {
      const deadLetter = async (code: string, pipeline = 'demo'): Promise<string> => {
        await submit(store, pipeline === 'demo' ? {} : onPipeline(pipeline));
        const claimed = await claimOne(store, `${pipeline}.a`);
        await failJob(store, claimed, { action: 'dead_letter', rollback: null }, failure('transient', code));
        await clock.advance(1);
        return claimed.job.id;
      };
      const d1 = await deadLetter('TIMEOUT');
      const d2 = await deadLetter('BROKEN');
      const d3 = await deadLetter('TIMEOUT', 'other');
      // Not dead letters: a permanent failure (run failed), a retried job, a replayed one.
      const permanent = await claimNew(store);
      await failJob(store, permanent, { action: 'fail', rollback: null }, failure('permanent', 'TIMEOUT'));
      const retried = await claimNew(store);
      await failJob(store, retried, { action: 'retry', delayMs: 1_000 }, failure('transient', 'TIMEOUT'));
      const replayed = await deadLetter('TIMEOUT');
      await store.operator.replayJob(replayed);

      const ids = async (query: Partial<Parameters<Store['reads']['listDeadLetters']>[0]> = {}): Promise<string[]> =>
        (await store.reads.listDeadLetters({ limit: 10, ...query })).map((j) => j.id);
      assert.deepEqual(await ids(), [d3, d2, d1]);
      assert.deepEqual(await ids({ code: 'TIMEOUT' }), [d3, d1]);
      assert.deepEqual(await ids({ queue: 'demo.a' }), [d2, d1]);
      assert.deepEqual(await ids({ code: 'TIMEOUT', queue: 'demo.a' }), [d1]);
      assert.deepEqual(await ids({ before: d3, limit: 1 }), [d2]);
      assert.deepEqual(await ids({ code: 'NOPE' }), []);
      const [newest] = await store.reads.listDeadLetters({ limit: 1 });
      assert.deepEqual(newest, await store.reads.getJob(d3), 'the job as getJob reads it');
    });
  });
}
