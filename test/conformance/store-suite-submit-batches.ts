/**
 * Conformance: `submitRuns` with several requests — one transaction, each request applied in
 * order as if alone (idempotency keys and subject supersession see the earlier requests),
 * results in input order, and all or nothing: a failing request stores nothing of the batch.
 * Rejections are checked both for batches without subjects and for batches with one (stores
 * may take a different path for those).
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ConflictError, PipelineError, ValidationError } from '../../src/core/errors.ts';
import type { SubmitRunRequest } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';
import type { StoreHarness } from './store-suite-fixture.ts';
import { STAGES, storeTest, runRequest, settle, stageJob, submitOne } from './store-suite-fixture.ts';

/** Everything a submission could change, to compare before and after a rejected batch. */
async function storeState(store: Store): Promise<unknown> {
  return {
    runs: await store.reads.listRuns({ limit: 1000 }),
    jobs: await store.reads.listJobs({ limit: 1000 }),
    queues: await store.reads.queueStats(),
  };
}

/** Asserts that the batch is rejected with `code` naming request `index`, and stores nothing. */
async function assertBatchRejected(
  store: Store,
  requests: readonly SubmitRunRequest[],
  expected: { errorClass: typeof ConflictError | typeof ValidationError; code: string; index: number; runId?: string },
): Promise<void> {
  const before = await storeState(store);
  await assert.rejects(store.jobs.submit(requests), (err: unknown) => {
    assert.ok(err instanceof expected.errorClass, `expected ${expected.errorClass.name}, got ${String(err)}`);
    assert.ok(err instanceof PipelineError);
    assert.equal(err.code, expected.code);
    assert.equal(err.details?.index, expected.index);
    assert.equal(err.details?.runId, expected.runId);
    return true;
  });
  assert.deepEqual(await storeState(store), before, 'a rejected batch stores nothing');
}

/** A request of another subject, so that a batch takes the subject path of stores that have one. */
function subjectRequest(version = 1): SubmitRunRequest {
  return runRequest({ subjectId: 'asset_batch', subjectVersion: version });
}

/** `submitRuns` with several requests. */
export function describeBatchSubmission(harness: StoreHarness): void {
  describe('batched submission', () => {
    const test = storeTest(harness);

    test('submitRuns of an empty batch returns an empty array and stores nothing', async ({ store }) => {
      assert.deepEqual(await store.jobs.submit([]), []);
      assert.deepEqual(await store.reads.listRuns({ limit: 10 }), []);
    });

    test('a batch of 100 creates 100 queued runs, each with pending stage records and one ready job, results in input order', async ({
      store,
    }) => {
      const requests = Array.from({ length: 100 }, (_, i) => runRequest({ input: { batch: i }, traceId: `t${i}` }));
      const results = await store.jobs.submit(requests);
      assert.equal(results.length, 100);
      results.forEach((result, i) => {
        assert.equal(result.created, true);
        assert.deepEqual(result.run.input, { batch: i }, 'results are in input order');
        assert.equal(result.run.traceId, `t${i}`);
        assert.equal(result.run.status, 'queued');
      });
      assert.equal(new Set(results.map((r) => r.run.id)).size, 100);

      for (const { run } of results) {
        const detail = await store.reads.getRun(run.id);
        assert.deepEqual(detail?.run, run);
        assert.deepEqual(
          detail?.stages.map((s) => [s.stage, s.status]),
          STAGES.map((stage) => [stage, 'pending']),
        );
      }
      const jobs = await store.reads.listJobs({ limit: 1000 });
      assert.equal(jobs.length, 100);
      assert.deepEqual(new Set(jobs.map((j) => j.runId)), new Set(results.map((r) => r.run.id)));
      assert.ok(jobs.every((j) => j.state === 'ready' && j.stage === 'a' && j.queue === 'demo.a'));
      const [stats] = await store.reads.queueStats();
      assert.equal(stats?.ready, 100);
    });

    test('the same idempotency key twice in one batch creates one run; the second result is that run with created false', async ({
      store,
    }) => {
      const keyed = runRequest({ idempotencyKey: 'dup', input: { v: 1 } });
      const results = await store.jobs.submit([keyed, runRequest(), keyed]);
      assert.deepEqual(
        results.map((r) => r.created),
        [true, true, false],
      );
      assert.equal(results[2]?.run.id, results[0]?.run.id);
      assert.deepEqual(results[2]?.run, results[0]?.run);
      assert.equal((await store.reads.listRuns({ limit: 10 })).length, 2);
      assert.equal((await store.reads.listJobs({ limit: 10 })).length, 2);
    });

    test('a batch returns the stored run for a key used before, in its place among new runs', async ({ store }) => {
      const stored = await submitOne(store, runRequest({ idempotencyKey: 'old', input: { v: 'old' } }));
      const results = await store.jobs.submit([
        runRequest({ input: { v: 'first' } }),
        runRequest({ idempotencyKey: 'old', input: { v: 'old' } }),
        runRequest({ input: { v: 'last' } }),
      ]);
      assert.deepEqual(
        results.map((r) => [r.created, r.run.input]),
        [
          [true, { v: 'first' }],
          [false, { v: 'old' }],
          [true, { v: 'last' }],
        ],
      );
      assert.deepEqual(results[1]?.run, stored.run);
      assert.equal((await store.reads.listJobs({ limit: 10 })).length, 3);
    });

    for (const withSubject of [false, true]) {
      const suffix = withSubject ? ' (batch with a subject)' : '';
      const extra = (): SubmitRunRequest[] => (withSubject ? [subjectRequest()] : [runRequest()]);

      test(`a batch reusing a stored key with another input is IDEMPOTENCY_KEY_REUSED at its index and stores nothing${suffix}`, async ({
        store,
      }) => {
        const stored = await submitOne(store, runRequest({ idempotencyKey: 'taken', input: { v: 1 } }));
        const batch = [...extra(), runRequest(), runRequest({ idempotencyKey: 'taken', input: { v: 2 } }), runRequest()];
        await assertBatchRejected(store, batch, { errorClass: ConflictError, code: 'IDEMPOTENCY_KEY_REUSED', index: 2, runId: stored.run.id });
      });

      test(`a key used twice in one batch with two inputs is IDEMPOTENCY_KEY_REUSED at the second and stores nothing${suffix}`, async ({
        store,
      }) => {
        await submitOne(store, runRequest());
        const batch = [
          runRequest({ idempotencyKey: 'twice', input: { v: 1 } }),
          ...extra(),
          runRequest({ idempotencyKey: 'twice', input: { v: 2 } }),
        ];
        await assertBatchRejected(store, batch, { errorClass: ConflictError, code: 'IDEMPOTENCY_KEY_REUSED', index: 2 });
      });

      test(`a batch with a first job outside its stages is a ValidationError at its index and stores nothing${suffix}`, async ({
        store,
      }) => {
        const batch = [...extra(), runRequest(), runRequest({ firstJob: stageJob('z') })];
        await assertBatchRejected(store, batch, { errorClass: ValidationError, code: 'VALIDATION_FAILED', index: 2 });
      });
    }

    test('v1 then v2 of a subject in one batch: v1 is superseded, v2 is live; v1 reads queued as its request left it', async ({
      store,
    }) => {
      const [v1, v2] = await store.jobs.submit([
        runRequest({ subjectId: 'asset_9', subjectVersion: 1 }),
        runRequest({ subjectId: 'asset_9', subjectVersion: 2 }),
      ]);
      assert.ok(v1 && v2);
      assert.equal(v1.created && v2.created, true);
      assert.equal(v1.run.status, 'queued');
      assert.equal(v2.run.status, 'queued');
      assert.equal((await store.reads.getRun(v1.run.id))?.run.status, 'superseded');
      assert.equal((await store.reads.getRun(v2.run.id))?.run.status, 'queued');
      assert.deepEqual(await store.reads.listJobs({ runId: v1.run.id, limit: 10 }), []);
      assert.equal((await store.reads.listJobs({ runId: v2.run.id, limit: 10 })).length, 1);
    });

    test('v2 then v1 of a subject in one batch: v1 is created superseded, with no job', async ({ store }) => {
      const [v2, v1] = await store.jobs.submit([
        runRequest({ subjectId: 'asset_8', subjectVersion: 2 }),
        runRequest({ subjectId: 'asset_8', subjectVersion: 1 }),
      ]);
      assert.equal(v1?.created, true);
      assert.equal(v1?.run.status, 'superseded');
      assert.equal(v2?.run.status, 'queued');
      assert.equal((await store.reads.listJobs({ limit: 10 })).length, 1);
    });

    test('a batch fires one wake hint per queue that got a job, after it is stored', async ({ store }) => {
      const woken: string[] = [];
      const unsubscribe = store.onWake((queue) => woken.push(queue));
      const other = { firstJob: stageJob('a', { pipeline: 'other' }), pipeline: 'other' };
      await store.jobs.submit([runRequest(), runRequest(other), runRequest(), runRequest(other), runRequest()]);
      await settle();
      unsubscribe();
      assert.deepEqual(woken.sort(), ['demo.a', 'other.a']);
    });
  });
}
