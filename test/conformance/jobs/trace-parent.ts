/**
 * Conformance, jobs sub-port: the trace context of a run. `traceParent` is stored with the run
 * by every submission path (one request, a batch without subjects, a batch with one) and comes
 * back with every claim of the run's jobs: later stages, retries and redeliveries, so their
 * attempts join the trace of the request that submitted the run.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { StoreHarness } from '../fixture.ts';
import { LEASE_MS, claimOne, complete, failJob, failure, leaseOf, runRequest, stageJob, storeTest } from '../fixture.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const traceParent = (span: string): string => `00-${TRACE_ID}-${span}-01`;

/** `jobs.submit`'s handling of `traceParent`. */
export function describeTraceParent(harness: StoreHarness): void {
  describe('trace context of runs', () => {
    const test = storeTest(harness);

    test('a run submitted alone keeps its traceParent; a run without one reads null', async ({ store }) => {
      const [traced, plain] = [
        await store.jobs.submit([runRequest({ traceId: TRACE_ID, traceParent: traceParent('00f067aa0ba902b7') })]),
        await store.jobs.submit([runRequest()]),
      ];
      assert.equal(traced[0]?.run.traceParent, traceParent('00f067aa0ba902b7'));
      assert.equal(plain[0]?.run.traceParent, null);
      assert.equal((await store.reads.getRun(traced[0]?.run.id ?? ''))?.run.traceParent, traceParent('00f067aa0ba902b7'));
      assert.equal((await store.reads.listRuns({ limit: 10 })).find((r) => r.id === traced[0]?.run.id)?.traceParent, traceParent('00f067aa0ba902b7'));
    });

    test('every run of a batch keeps its own traceParent, with and without subjects', async ({ store }) => {
      const spans = ['0000000000000001', '0000000000000002', '0000000000000003'];
      const plain = await store.jobs.submit(spans.map((span, i) => runRequest({ input: { i }, traceId: TRACE_ID, traceParent: traceParent(span) })));
      assert.deepEqual(plain.map((r) => r.run.traceParent), spans.map(traceParent));
      const subjects = await store.jobs.submit(
        spans.map((span, i) => runRequest({ input: { i }, subjectId: `asset_${i}`, subjectVersion: 1, traceId: TRACE_ID, traceParent: traceParent(span) })),
      );
      assert.deepEqual(subjects.map((r) => r.run.traceParent), spans.map(traceParent));
      for (const { run } of [...plain, ...subjects]) assert.equal((await store.reads.getRun(run.id))?.run.traceParent, run.traceParent);
    });

    test('claims of later stages, retries and redeliveries of a run read its traceParent', async ({ store, clock }) => {
      const parent = traceParent('00f067aa0ba902b7');
      await store.jobs.submit([runRequest({ traceId: TRACE_ID, traceParent: parent })]);
      const first = await claimOne(store, 'demo.a');
      assert.equal(first.run.traceParent, parent);
      await failJob(store, first, { action: 'retry', delayMs: 0 }, failure('transient'));
      const retried = await claimOne(store, 'demo.a');
      assert.equal(retried.job.attempt, 2);
      assert.equal(retried.run.traceParent, parent);
      await clock.advance(LEASE_MS + 1);
      const redelivered = await claimOne(store, 'demo.a', { workerId: 'w2' });
      assert.equal(redelivered.redelivered, true);
      assert.equal(redelivered.run.traceParent, parent);
      const result = await complete(store, { lease: leaseOf(redelivered), output: null, durationMs: 1, next: stageJob('b') });
      assert.equal(result.outcome, 'committed');
      const next = await claimOne(store, 'demo.b');
      assert.equal(next.run.traceParent, parent);
      assert.equal(next.job.traceId, TRACE_ID);
    });
  });
}
