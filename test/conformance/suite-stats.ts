/**
 * Conformance, stats sub-port: recorded queue activity read over a window of buckets (with the
 * ages of ready jobs), its retention, and dead letters grouped by error code.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ACTIVITY_RETENTION_MS, JOB_AGE_BOUNDS_MS, type QueueActivity } from '../../src/core/ports/stats.ts';
import type { StoreHarness } from './fixture.ts';
import { claimNew, claimOne, failJob, failure, onPipeline, storeTest, submit } from './fixture.ts';

const MINUTE = 60_000;

/** Ages of ready jobs, as counts per bucket of JOB_AGE_BOUNDS_MS, from a sparse map. */
function ages(counts: Record<number, number>): number[] {
  return Array.from({ length: JOB_AGE_BOUNDS_MS.length + 1 }, (_, i) => counts[i] ?? 0);
}

/** Declares the stats sub-port's tests: `recordActivity`, `queueActivity`, `deadLetterGroups`. */
export function describeStatsPort(harness: StoreHarness): void {
  describe('stats sub-port', () => {
    const test = storeTest(harness);

    test('recordActivity adds to the current minute of each queue; queueActivity sums minutes into aligned buckets with the ready ages', async ({ store, clock }) => {
      // The fake clock starts on a whole minute: t0 is the start of a bucket.
      const t0 = await store.now();
      assert.equal(t0 % MINUTE, 0);
      await clock.advance(10_000);
      await store.stats.recordActivity([{ queue: 'demo.a', completed: 3, failed: 0 }, { queue: 'demo.b', completed: 1, failed: 1 }]);
      await store.stats.recordActivity([{ queue: 'demo.a', completed: 2, failed: 1 }, { queue: 'demo.a', completed: 1, failed: 0 }]);
      await clock.advance(MINUTE);
      await store.stats.recordActivity([{ queue: 'demo.a', completed: 0, failed: 2 }]);
      await submit(store, onPipeline('other'));
      await clock.advance(MINUTE + 5_000);
      await submit(store);
      await store.stats.recordActivity([]);
      await clock.advance(2_000);

      // now = t0 + 137 s: three one-minute buckets start at t0 (the last one holds now).
      const report = await store.stats.queueActivity({ bucketMinutes: 1, buckets: 3 });
      assert.deepEqual([report.from, report.bucketMs, report.now], [t0, MINUTE, t0 + 137_000]);
      const expected: QueueActivity[] = [
        { queue: 'demo.a', completed: [6, 0, 0], failed: [1, 2, 0], readyAges: ages({ 1: 1 }) },
        { queue: 'demo.b', completed: [1, 0, 0], failed: [1, 0, 0], readyAges: ages({}) },
        { queue: 'other.a', completed: [0, 0, 0], failed: [0, 0, 0], readyAges: ages({ 3: 1 }) },
      ];
      assert.deepEqual(report.queues, expected);

      const narrow = await store.stats.queueActivity({ bucketMinutes: 1, buckets: 2 });
      assert.equal(narrow.from, t0 + MINUTE);
      assert.deepEqual(
        narrow.queues.map((q) => [q.queue, q.completed, q.failed]),
        [
          ['demo.a', [0, 0], [2, 0]],
          ['other.a', [0, 0], [0, 0]],
        ],
        'what was recorded before the window is not counted; a queue with ready jobs is listed',
      );
      // t0 is a whole hour, so two-minute buckets start at t0 too; now is in the second one.
      const wide = await store.stats.queueActivity({ bucketMinutes: 2, buckets: 2 });
      assert.equal(wide.from, t0, 'buckets are aligned to their width');
      assert.deepEqual(wide.queues.find((q) => q.queue === 'demo.a')?.failed, [3, 0]);
    });

    test('recordActivity keeps a day of minutes: older ones are gone once activity is recorded again', async ({ store, clock }) => {
      await store.stats.recordActivity([{ queue: 'demo.a', completed: 5, failed: 0 }]);
      await clock.advance(ACTIVITY_RETENTION_MS + MINUTE);
      const day = ACTIVITY_RETENTION_MS / MINUTE;
      const before = await store.stats.queueActivity({ bucketMinutes: 60, buckets: day / 60 + 1 });
      assert.equal(before.queues[0]?.completed.reduce((a, b) => a + b, 0), 5, 'kept until the next record');
      await store.stats.recordActivity([{ queue: 'demo.b', completed: 1, failed: 0 }]);
      const after = await store.stats.queueActivity({ bucketMinutes: 60, buckets: day / 60 + 1 });
      assert.deepEqual(
        after.queues.map((q) => [q.queue, q.completed.reduce((a, b) => a + b, 0)]),
        [['demo.b', 1]],
      );
    });

    test('queueActivity of an empty store lists no queue', async ({ store }) => {
      const report = await store.stats.queueActivity({ bucketMinutes: 5, buckets: 3 });
      assert.deepEqual(report.queues, []);
      assert.equal(report.from, Math.floor(report.now / (5 * MINUTE)) * 5 * MINUTE - 10 * MINUTE);
    });

    test('deadLetterGroups groups dead letters by code, the largest group first, with their queues and the newest one', async ({ store, clock }) => {
      assert.deepEqual(await store.stats.deadLetterGroups(), []);
      const deadLetter = async (code: string, message: string, pipeline = 'demo'): Promise<string> => {
        await submit(store, pipeline === 'demo' ? {} : onPipeline(pipeline));
        const claimed = await claimOne(store, `${pipeline}.a`);
        await failJob(store, claimed, { action: 'dead_letter', rollback: null }, { class: 'transient', code, message });
        await clock.advance(1);
        return claimed.job.id;
      };
      await deadLetter('TIMEOUT', 'first');
      await deadLetter('BROKEN', 'pipe');
      const newest = await deadLetter('TIMEOUT', 'latest', 'other');
      // A permanent failure is not a dead letter.
      await failJob(store, await claimNew(store), { action: 'fail', rollback: null }, failure('permanent', 'BROKEN'));

      assert.deepEqual(await store.stats.deadLetterGroups(), [
        { code: 'TIMEOUT', errorClass: 'transient', message: 'latest', count: 2, queues: ['demo.a', 'other.a'], latestJobId: newest },
        { code: 'BROKEN', errorClass: 'transient', message: 'pipe', count: 1, queues: ['demo.a'], latestJobId: (await store.reads.listDeadLetters({ code: 'BROKEN', limit: 1 }))[0]?.id ?? '' },
      ]);
      await store.operator.replayJob(newest);
      assert.deepEqual(
        (await store.stats.deadLetterGroups()).map((g) => [g.code, g.count]),
        [
          ['BROKEN', 1],
          ['TIMEOUT', 1],
        ],
        'a replayed job is no dead letter; equal counts order by code',
      );
    });
  });
}
