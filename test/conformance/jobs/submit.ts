/**
 * Conformance, jobs sub-port: `jobs.submit`, of one request and of several. A batch is one
 * transaction, each request applied in order as if alone (idempotency keys and subject
 * supersession see the earlier requests), results in input order, and all or nothing: a failing
 * request stores nothing of the batch. Rejections are checked both for batches without subjects
 * and for batches with one (stores may take a different path for those).
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ConflictError, PipelineError, ValidationError } from '../../../src/core/errors.ts';
import { jobIdempotencyKey } from '../../../src/core/keys.ts';
import type { SubmitRunRequest } from '../../../src/core/ports/jobs.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import type { StoreHarness } from '../fixture.ts';
import { STAGES, assertRejectsWith, claimOne, complete, fail, failure, leaseOf, onPipeline, runRequest, settle, stageJob, storeTest, submit, submitOne } from '../fixture.ts';

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

/** `jobs.submit` of one request at a time. */
export function describeSubmitOne(harness: StoreHarness): void {
  describe('submit one run', () => {
    const test = storeTest(harness);

    test('submitting one run creates a queued run, pending stage records and one ready job for the first stage', async ({ store }) => {
      const now = await store.now();
      const request = runRequest({ tenant: 'acme', traceId: 'trace-1' });
      const { run, created } = await submitOne(store, request);
      assert.equal(created, true);
      assert.equal(run.status, 'queued');
      assert.equal(run.pipeline, 'demo');
      assert.equal(run.currentStage, 'a');
      assert.deepEqual(run.input, request.input);
      assert.equal(run.inputChecksum, request.inputChecksum);
      assert.equal(run.error, null);
      assert.equal(run.createdAt, now);
      assert.equal(run.finishedAt, null);

      const detail = await store.reads.getRun(run.id);
      assert.ok(detail);
      assert.deepEqual(detail.run, run);
      assert.deepEqual(
        detail.stages.map((s) => [s.stage, s.index, s.status, s.attempts, s.output, s.rollbackStatus]),
        STAGES.map((stage, index) => [stage, index, 'pending', 0, null, null]),
      );

      const jobs = await store.reads.listJobs({ runId: run.id, limit: 10 });
      assert.equal(jobs.length, 1);
      const job = jobs[0];
      assert.ok(job);
      assert.deepEqual(
        { ...job, id: '' },
        {
          id: '',
          runId: run.id,
          pipeline: 'demo',
          stage: 'a',
          queue: 'demo.a',
          kind: 'stage',
          state: 'ready',
          idempotencyKey: jobIdempotencyKey(run.id, 'a', 'stage'),
          attempt: 0,
          maxAttempts: 3,
          priority: 0,
          availableAt: now,
          enqueuedAt: now,
          tenant: 'acme',
          traceId: 'trace-1',
          leaseOwner: null,
          leaseToken: null,
          fence: null,
          leaseUntil: null,
          leaseMs: null,
          redeliveries: 0,
          lastError: null,
          lockWaitSince: null,
        },
      );
      assert.deepEqual(await store.reads.getJob(job.id), job);
    });

    test('submitting one run with an idempotency key already used returns the same run with created false and no new job', async ({ store }) => {
      const request = runRequest({ idempotencyKey: 'req-1' });
      const first = await submitOne(store, request);
      const second = await submitOne(store, request);
      assert.equal(second.created, false);
      assert.equal(second.run.id, first.run.id);
      assert.equal((await store.reads.listJobs({ limit: 10 })).length, 1);
      assert.equal((await store.reads.listRuns({ limit: 10 })).length, 1);
    });

    test('submitting one run returns the existing run for its key whatever its status', async ({ store }) => {
      const request = runRequest({ idempotencyKey: 'req-2' });
      const first = await submitOne(store, request);
      await store.operator.cancelRun(first.run.id, 'changed my mind');
      const again = await submitOne(store, request);
      assert.equal(again.created, false);
      assert.equal(again.run.id, first.run.id);
      assert.equal(again.run.status, 'cancelled');
    });

    test('submitting one run with a used idempotency key and another input checksum is IDEMPOTENCY_KEY_REUSED', async ({ store }) => {
      await submitOne(store, runRequest({ idempotencyKey: 'req-3', input: { v: 1 } }));
      await assertRejectsWith(
        submitOne(store, runRequest({ idempotencyKey: 'req-3', input: { v: 2 } })),
        ConflictError,
        'IDEMPOTENCY_KEY_REUSED',
      );
      assert.equal((await store.reads.listRuns({ limit: 10 })).length, 1);
    });

    test('submitting v2 of a subject supersedes v1: its job is deleted and its lease holder is told cancelled', async ({ store }) => {
      const v1 = await submit(store, { subjectId: 'asset_42', subjectVersion: 1 });
      const holder = await claimOne(store);
      assert.equal(holder.run.id, v1.id);

      const v2 = await submitOne(store, runRequest({ subjectId: 'asset_42', subjectVersion: 2 }));
      assert.equal(v2.created, true);
      assert.equal(v2.run.status, 'queued');

      const old = await store.reads.getRun(v1.id);
      assert.equal(old?.run.status, 'superseded');
      assert.notEqual(old?.run.finishedAt, null);
      assert.equal(await store.reads.getJob(holder.job.id), null);
      assert.deepEqual(await store.reads.listJobs({ runId: v1.id, limit: 10 }), []);
      assert.equal((await store.reads.listJobs({ runId: v2.run.id, limit: 10 })).length, 1);

      assert.deepEqual(await store.jobs.renew([leaseOf(holder)]), [{ status: 'cancelled' }]);
      const commit = await complete(store, { lease: leaseOf(holder), output: 1, durationMs: 1, next: null });
      assert.deepEqual(commit, { outcome: 'cancelled' });
      const failed = await fail(store, {
        lease: leaseOf(holder),
        error: failure('transient'),
        durationMs: 1,
        decision: { action: 'retry', delayMs: 0 },
      });
      assert.deepEqual(failed, { outcome: 'cancelled' });
      assert.deepEqual(await store.reads.readLedger(v1.id), []);
    });

    test('submitting v1 of a subject after v2 exists creates it superseded, with no job', async ({ store }) => {
      const v2 = await submit(store, { subjectId: 'asset_7', subjectVersion: 2 });
      const v1 = await submitOne(store, runRequest({ subjectId: 'asset_7', subjectVersion: 1 }));
      assert.equal(v1.created, true);
      assert.equal(v1.run.status, 'superseded');
      assert.deepEqual(await store.reads.listJobs({ runId: v1.run.id, limit: 10 }), []);
      assert.equal((await store.reads.getRun(v2.id))?.run.status, 'queued');
      assert.equal((await store.reads.listJobs({ runId: v2.id, limit: 10 })).length, 1);
    });

    test('runs of other subjects or pipelines are not superseded', async ({ store }) => {
      const other = await submit(store, { subjectId: 'asset_1', subjectVersion: 1 });
      const otherPipeline = await submit(store, {
        ...onPipeline('thumbs'),
        subjectId: 'asset_2',
        subjectVersion: 1,
      });
      await submit(store, { subjectId: 'asset_2', subjectVersion: 2 });
      assert.equal((await store.reads.getRun(other.id))?.run.status, 'queued');
      assert.equal((await store.reads.getRun(otherPipeline.id))?.run.status, 'queued');
    });
  });
}

/** `jobs.submit` with several requests. */
export function describeSubmitBatches(harness: StoreHarness): void {
  describe('submit batches', () => {
    const test = storeTest(harness);

    test('submit of an empty batch returns an empty array and stores nothing', async ({ store }) => {
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
      const other = onPipeline('other');
      await store.jobs.submit([runRequest(), runRequest(other), runRequest(), runRequest(other), runRequest()]);
      await settle();
      unsubscribe();
      assert.deepEqual(woken.sort(), ['demo.a', 'other.a']);
    });
  });
}
