/**
 * Conformance, retention sub-port: runs past their retention period are deleted with everything
 * that is theirs, in bounded batches, oldest finished first; live, young and still-needed runs,
 * publications and their artifacts stay; the dry-run count changes nothing.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Run } from '../../src/core/model.ts';
import type { PruneCounts, RetentionPolicy } from '../../src/core/ports/retention.ts';
import type { Store } from '../../src/core/ports/store.ts';
import type { StoreHarness } from './fixture.ts';
import { art, claimOne, complete, failJob, failure, leaseOf, onPipeline, stageJob, storeTest, submit } from './fixture.ts';

const DAY = 86_400_000;

/** Every kind kept one day. */
const ONE_DAY: RetentionPolicy = { succeededMs: DAY, failedMs: DAY, cancelledMs: DAY, requestsMs: DAY };

/** Counts with the given kinds, the others 0. */
function counts(some: Partial<PruneCounts>): PruneCounts {
  return { runs: 0, stageRecords: 0, ledgerEntries: 0, jobs: 0, attempts: 0, requests: 0, ...some };
}

/** Completes the job waiting on `<pipeline>.<stage>` with `output`, enqueueing `next` (or ending the run). */
async function pass(store: Store, pipeline: string, stage: string, next: string | null, output: Record<string, string> = { done: stage }): Promise<void> {
  const claimed = await claimOne(store, `${pipeline}.${stage}`);
  const result = await complete(store, {
    lease: leaseOf(claimed),
    output,
    durationMs: 1,
    next: next === null ? null : stageJob(next, { pipeline }),
  });
  assert.equal(result.outcome, 'committed');
}

/** A run of `pipeline` that succeeds after stages a and b (2 ledger entries, 3 stage records). */
async function succeeded(store: Store, pipeline: string, extra: Partial<Parameters<typeof submit>[1]> = {}): Promise<Run> {
  const run = await submit(store, { ...onPipeline(pipeline), ...extra });
  await pass(store, pipeline, 'a', 'b');
  await pass(store, pipeline, 'b', null);
  return run;
}

/** A run of `pipeline` whose stage a fails once (retried), then for good with `action`. */
async function failed(store: Store, pipeline: string, action: 'fail' | 'dead_letter'): Promise<Run> {
  const run = await submit(store, onPipeline(pipeline));
  await failJob(store, await claimOne(store, `${pipeline}.a`), { action: 'retry', delayMs: 0 });
  await failJob(store, await claimOne(store, `${pipeline}.a`), { action, rollback: null }, failure('permanent'));
  return run;
}

/** Statuses of the runs, or null for the ones that are gone. */
async function statuses(store: Store, runs: readonly Run[]): Promise<(string | null)[]> {
  return Promise.all(runs.map(async (run) => (await store.reads.getRun(run.id))?.run.status ?? null));
}

/** Declares the retention sub-port's tests: `prune` and `count`. */
export function describeRetentionPort(harness: StoreHarness): void {
  describe('retention sub-port', () => {
    const test = storeTest(harness);

    test('expired runs are deleted with their stage records, ledger, jobs and attempts; their idempotency key is free again', async ({ store, clock }) => {
      const ok = await succeeded(store, 'ok', { idempotencyKey: 'k1' });
      const bad = await failed(store, 'bad', 'fail');
      const dead = await failed(store, 'dead', 'dead_letter');
      const gone = await submit(store, onPipeline('gone'));
      await store.operator.cancelRun(gone.id, 'test');
      assert.deepEqual(await statuses(store, [ok, bad, dead, gone]), ['succeeded', 'failed', 'dead_lettered', 'cancelled']);
      await clock.advance(DAY);

      const pruned = await store.retention.prune(ONE_DAY, 100);
      assert.deepEqual(pruned, counts({ runs: 4, stageRecords: 12, ledgerEntries: 2, jobs: 2, attempts: 4 }));
      assert.deepEqual(await statuses(store, [ok, bad, dead, gone]), [null, null, null, null]);
      for (const run of [ok, bad, dead, gone]) {
        assert.deepEqual(await store.reads.readLedger(run.id), []);
        assert.deepEqual(await store.reads.listAttempts(run.id), []);
        assert.deepEqual(await store.reads.listJobs({ runId: run.id, limit: 10 }), []);
      }
      assert.deepEqual(await store.reads.listDeadLetters({ limit: 10 }), []);
      assert.deepEqual(await store.reads.listRuns({ limit: 10 }), []);
      assert.deepEqual(await store.retention.prune(ONE_DAY, 100), counts({}), 'nothing left to prune');

      const again = await submit(store, { ...onPipeline('ok'), idempotencyKey: 'k1' });
      assert.notEqual(again.id, ok.id, 'the key of a pruned run makes a new run');
      assert.equal(again.status, 'queued');
    });

    test('queued, running and parked runs are kept however old; ended runs until their period has passed', async ({ store, clock }) => {
      const queued = await submit(store, onPipeline('q'));
      const running = await submit(store, onPipeline('r'));
      await pass(store, 'r', 'a', 'b');
      const parked = await submit(store, onPipeline('p'));
      await failJob(store, await claimOne(store, 'p.a'), { action: 'park' });
      const ok = await succeeded(store, 'ok');
      const bad = await failed(store, 'bad', 'fail');
      const all = [queued, running, parked, ok, bad];
      const policy: RetentionPolicy = { succeededMs: DAY, failedMs: 2 * DAY, cancelledMs: DAY, requestsMs: null };

      await clock.advance(DAY - 1);
      assert.deepEqual(await store.retention.prune(policy, 100), counts({}));
      await clock.advance(1);
      assert.deepEqual(await store.retention.prune(policy, 100), counts({ runs: 1, stageRecords: 3, ledgerEntries: 2 }));
      assert.deepEqual(await statuses(store, all), ['queued', 'running', 'parked', null, 'failed']);
      await clock.advance(DAY);
      assert.equal((await store.retention.prune(policy, 100)).runs, 1);
      await clock.advance(365 * DAY);
      assert.deepEqual(await store.retention.prune(policy, 100), counts({}));
      assert.deepEqual(await statuses(store, all), ['queued', 'running', 'parked', null, null]);
    });

    test('a null period keeps its runs forever', async ({ store, clock }) => {
      const ok = await succeeded(store, 'ok');
      const bad = await failed(store, 'bad', 'dead_letter');
      await clock.advance(1000 * DAY);
      const policy: RetentionPolicy = { succeededMs: null, failedMs: DAY, cancelledMs: DAY, requestsMs: null };
      assert.equal((await store.retention.prune(policy, 100)).runs, 1);
      assert.deepEqual(await statuses(store, [ok, bad]), ['succeeded', null]);
    });

    test('a batch deletes at most `limit` runs, oldest finished first', async ({ store, clock }) => {
      const runs: Run[] = [];
      for (let i = 0; i < 5; i++) {
        runs.push(await succeeded(store, `p${i}`));
        await clock.advance(1_000);
      }
      await clock.advance(DAY);
      assert.equal((await store.retention.prune(ONE_DAY, 2)).runs, 2);
      assert.deepEqual(await statuses(store, runs), [null, null, 'succeeded', 'succeeded', 'succeeded']);
      assert.equal((await store.retention.prune(ONE_DAY, 2)).runs, 2);
      assert.deepEqual(await statuses(store, runs), [null, null, null, null, 'succeeded']);
      assert.equal((await store.retention.prune(ONE_DAY, 2)).runs, 1);
      assert.equal((await store.retention.prune(ONE_DAY, 2)).runs, 0);
    });

    test('count changes nothing and says what pruning until empty deletes', async ({ store, clock }) => {
      const runs = [await succeeded(store, 'ok'), await failed(store, 'bad', 'dead_letter'), await succeeded(store, 'ok2')];
      await store.requests.remember({ scope: 's', key: 'old', requestHash: 'h', value: { n: 1 } });
      await clock.advance(DAY);
      await store.requests.remember({ scope: 's', key: 'young', requestHash: 'h', value: { n: 2 } });

      const expected = counts({ runs: 3, stageRecords: 9, ledgerEntries: 4, jobs: 1, attempts: 2, requests: 1 });
      assert.deepEqual(await store.retention.count(ONE_DAY), expected);
      assert.deepEqual(await store.retention.count(ONE_DAY), expected, 'counting twice counts the same');
      assert.deepEqual(await statuses(store, runs), ['succeeded', 'dead_lettered', 'succeeded']);
      assert.equal((await store.reads.readLedger(runs[0]!.id)).length, 2);
      assert.notEqual(await store.requests.get('s', 'old'), null);

      const total = counts({});
      for (let pruned = await store.retention.prune(ONE_DAY, 1); pruned.runs + pruned.requests > 0; pruned = await store.retention.prune(ONE_DAY, 1)) {
        for (const kind of Object.keys(total) as (keyof PruneCounts)[]) total[kind] += pruned[kind];
      }
      assert.deepEqual(total, expected);
      assert.equal(await store.requests.get('s', 'old'), null);
      assert.equal((await store.requests.get('s', 'young'))?.key, 'young');
      assert.deepEqual(await store.retention.count(ONE_DAY), counts({}));
    });

    test("publications and their artifacts outlive the runs that set them; a subject's current version is kept", async ({ store, clock }) => {
      const subject = { subjectId: 'asset_1' };
      const v1 = await submit(store, { ...onPipeline('thumb'), ...subject, subjectVersion: 1 });
      const claimed = await claimOne(store, 'thumb.a');
      const publish = [{ subjectId: 'asset_1', profile: 'small', artifactRef: art(7), subjectVersion: 1 }];
      assert.equal((await complete(store, { lease: leaseOf(claimed), output: { artifact: art(7) }, durationMs: 1, next: null, publish })).outcome, 'committed');
      const v2 = await submit(store, { ...onPipeline('thumb'), ...subject, subjectVersion: 2 });
      await store.operator.cancelRun(v2.id, 'test');
      const v3 = await submit(store, { ...onPipeline('thumb'), ...subject, subjectVersion: 3 });
      await store.operator.cancelRun(v3.id, 'test');
      await clock.advance(DAY);

      assert.deepEqual(await store.retention.prune(ONE_DAY, 100), counts({ runs: 2, stageRecords: 6, ledgerEntries: 1 }));
      assert.deepEqual(await statuses(store, [v1, v2, v3]), [null, null, 'cancelled'], 'the highest version stays');
      assert.equal((await store.publications.get('asset_1', 'small'))?.artifactRef, art(7));
      assert.deepEqual(await store.artifactRefs.list(), [art(7)]);

      const older = await submit(store, { ...onPipeline('thumb'), ...subject, subjectVersion: 2 });
      assert.equal(older.status, 'superseded', 'a late older version is still superseded by the kept one');
    });
  });
}
