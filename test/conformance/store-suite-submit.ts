/**
 * Conformance: migrations, submission, submission idempotency and supersession.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ConflictError } from '../../src/core/errors.ts';
import { jobIdempotencyKey } from '../../src/core/keys.ts';
import type { StoreHarness } from './store-suite-fixture.ts';
import {
  STAGES,
  assertRejectsWith,
  storeTest,
  claimOne,
  complete,
  fail,
  failure,
  leaseOf,
  runRequest,
  submit,
  submitOne,
} from './store-suite-fixture.ts';

/** Migrations and `submitRuns` of one request at a time. */
export function describeSubmission(harness: StoreHarness): void {
  describe('migrations and submission', () => {
    const test = storeTest(harness);

    test('migrate is idempotent: a second call applies nothing and keeps the version', async ({ store, migration }) => {
      assert.ok(migration.version > 0);
      assert.ok(migration.applied.length > 0, 'the first migrate on a fresh store applies something');
      const again = await store.migrate();
      assert.deepEqual(again.applied, []);
      assert.equal(again.version, migration.version);
    });

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
        pipeline: 'thumbs',
        subjectId: 'asset_2',
        subjectVersion: 1,
        firstJob: { stage: 'a', queue: 'thumbs.a', kind: 'stage', maxAttempts: 3, priority: 0 },
      });
      await submit(store, { subjectId: 'asset_2', subjectVersion: 2 });
      assert.equal((await store.reads.getRun(other.id))?.run.status, 'queued');
      assert.equal((await store.reads.getRun(otherPipeline.id))?.run.status, 'queued');
    });
  });
}
