/**
 * Conformance, jobs sub-port: admission limits of `jobs.submit` (`SubmitRunRequest.admission`).
 * A tenant's runs queued or running, and a queue's ready jobs, are counted in the submit's own
 * transaction: past a limit the batch is refused with an `AdmissionRefusedError` and stores
 * nothing, concurrent submissions never overshoot, and a request answered by its idempotency key
 * is never refused. Every way a run stops (or starts again) being in flight is walked, so a store
 * that keeps a counter cannot drift from the statuses.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { AdmissionRefusedError } from '../../../src/core/errors.ts';
import type { SubmitAdmission, SubmitRunRequest } from '../../../src/core/ports/jobs.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import type { StoreHarness } from '../fixture.ts';
import { claimOne, failJob, failure, passStage, runRequest, stageJob, storeTest, submitOne } from '../fixture.ts';

const RETRY_AFTER_MS = 1_000;

function limited(admission: Omit<SubmitAdmission, 'retryAfterMs'>, overrides: Partial<SubmitRunRequest> = {}): SubmitRunRequest {
  return runRequest({ tenant: 'acme', ...overrides, admission: { retryAfterMs: RETRY_AFTER_MS, ...admission } });
}

async function storeState(store: Store): Promise<unknown> {
  return { runs: await store.reads.listRuns({ limit: 1000 }), jobs: await store.reads.listJobs({ limit: 1000 }) };
}

/** Asserts that `requests` are refused with `code` at `index` and that nothing was stored. */
async function assertRefused(store: Store, requests: readonly SubmitRunRequest[], code: string, index = 0): Promise<void> {
  const before = await storeState(store);
  await assert.rejects(store.jobs.submit(requests), (err: unknown) => {
    assert.ok(err instanceof AdmissionRefusedError, `expected AdmissionRefusedError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.equal(err.statusCode, 429);
    assert.equal(err.details?.index, index);
    assert.ok(err.retryAfterMs > 0);
    return true;
  });
  assert.deepEqual(await storeState(store), before, 'a refused batch stores nothing');
}

const IN_FLIGHT_1 = { maxInFlightRuns: 1 };

/** Submits the tenant's only run allowed in flight, and asserts a second one is refused. */
async function fillOne(store: Store): Promise<string> {
  const { run } = await submitOne(store, limited(IN_FLIGHT_1));
  await assertRefused(store, [limited(IN_FLIGHT_1)], 'TENANT_IN_FLIGHT_LIMIT');
  return run.id;
}

/** Asserts the tenant may submit again (and leaves that run in flight). */
async function assertAdmitsOne(store: Store): Promise<void> {
  const { created } = await submitOne(store, limited(IN_FLIGHT_1));
  assert.equal(created, true);
}

export function describeSubmitAdmission(harness: StoreHarness): void {
  describe('submit admission', () => {
    const test = storeTest(harness);

    test('a tenant at maxInFlightRuns is refused TENANT_IN_FLIGHT_LIMIT; other tenants and runs without a tenant are counted apart', async ({ store }) => {
      for (let i = 0; i < 3; i++) await submitOne(store, limited({ maxInFlightRuns: 3 }));
      await assertRefused(store, [limited({ maxInFlightRuns: 3 })], 'TENANT_IN_FLIGHT_LIMIT');
      assert.equal((await submitOne(store, limited({ maxInFlightRuns: 3 }, { tenant: 'globex' }))).created, true);
      const anonymous = runRequest({ admission: { retryAfterMs: RETRY_AFTER_MS, maxInFlightRuns: 1 } });
      assert.equal((await submitOne(store, anonymous)).created, true);
      await assertRefused(store, [runRequest({ admission: anonymous.admission })], 'TENANT_IN_FLIGHT_LIMIT');
      await assert.rejects(store.jobs.submit([limited({ maxInFlightRuns: 3 })]), (err: unknown) => {
        assert.ok(err instanceof AdmissionRefusedError);
        assert.deepEqual(err.details, { index: 0, tenant: 'acme', limit: 3, retryAfterMs: RETRY_AFTER_MS });
        return true;
      });
    });

    test('a running run counts; a succeeded one frees its slot', async ({ store }) => {
      await fillOne(store);
      await passStage(store, 'a', 'b');
      await assertRefused(store, [limited(IN_FLIGHT_1)], 'TENANT_IN_FLIGHT_LIMIT');
      await passStage(store, 'b', 'c');
      await passStage(store, 'c', null);
      await assertAdmitsOne(store);
    });

    test('cancelled, superseded, failed, parked and dead-lettered runs free their slot; resume and replay take it again', async ({ store }) => {
      const cancelLatestQueued = async (): Promise<void> => {
        const [run] = await store.reads.listRuns({ limit: 1, status: 'queued', tenant: 'acme' });
        assert.ok(run);
        await store.operator.cancelRun(run.id, 'test');
      };
      await store.operator.cancelRun(await fillOne(store), 'test');
      await assertAdmitsOne(store);
      await cancelLatestQueued();

      await submitOne(store, limited(IN_FLIGHT_1, { subjectId: 'logo', subjectVersion: 1 }));
      const newer = await submitOne(store, runRequest({ tenant: 'globex', subjectId: 'logo', subjectVersion: 2 }));
      await assertAdmitsOne(store);
      await store.operator.cancelRun(newer.run.id, 'test');
      await cancelLatestQueued();

      await fillOne(store);
      await failJob(store, await claimOne(store), { action: 'fail', rollback: null }, failure('permanent'));
      await assertAdmitsOne(store);
      await cancelLatestQueued();

      const parked = await fillOne(store);
      await failJob(store, await claimOne(store), { action: 'park' }, failure('intervention'));
      await assertAdmitsOne(store);
      await cancelLatestQueued();
      await store.operator.resumeRun(parked);
      await assertRefused(store, [limited(IN_FLIGHT_1)], 'TENANT_IN_FLIGHT_LIMIT');

      const dead = await claimOne(store);
      assert.equal(dead.run.id, parked);
      await failJob(store, dead, { action: 'dead_letter', rollback: null });
      await assertAdmitsOne(store);
      await cancelLatestQueued();
      await store.operator.replayJob(dead.job.id);
      await assertRefused(store, [limited(IN_FLIGHT_1)], 'TENANT_IN_FLIGHT_LIMIT');
      assert.equal(await store.operator.drainQueue('demo.a'), 1);
      await assertAdmitsOne(store);
    });

    test('a resubmitted idempotency key answers its run even at the limit or when the caller refuses new runs', async ({ store }) => {
      const first = await submitOne(store, limited(IN_FLIGHT_1, { idempotencyKey: 'k1', input: { n: 'k1' } }));
      const again = await submitOne(store, limited(IN_FLIGHT_1, { idempotencyKey: 'k1', input: { n: 'k1' } }));
      assert.deepEqual([again.created, again.run.id], [false, first.run.id]);
      const refuse = { code: 'TENANT_RATE_LIMITED', retryAfterMs: 2_500 } as const;
      const replayed = await submitOne(store, limited({ refuse }, { idempotencyKey: 'k1', input: { n: 'k1' } }));
      assert.equal(replayed.run.id, first.run.id);
      await assertRefused(store, [limited({ refuse }, { tenant: 'globex' })], 'TENANT_RATE_LIMITED');
      await assert.rejects(store.jobs.submit([limited({ refuse })]), (err: unknown) => err instanceof AdmissionRefusedError && err.retryAfterMs === 2_500);
    });

    test('a batch counts the runs it creates before each request and is refused whole at the first one over', async ({ store }) => {
      await submitOne(store, limited({ maxInFlightRuns: 3 }));
      const batch = [
        limited({ maxInFlightRuns: 3 }, { idempotencyKey: 'same', input: { n: 'same' } }),
        limited({ maxInFlightRuns: 3 }, { idempotencyKey: 'same', input: { n: 'same' } }),
        limited({ maxInFlightRuns: 3 }),
        limited({ maxInFlightRuns: 3 }),
      ];
      await assertRefused(store, batch, 'TENANT_IN_FLIGHT_LIMIT', 3);
      const results = await store.jobs.submit(batch.slice(0, 3));
      assert.deepEqual(results.map((r) => r.created), [true, false, true]);
    });

    test('a queue holding maxBacklog ready jobs, due or delayed, is refused QUEUE_BACKLOG_FULL; leased jobs do not count', async ({ store }) => {
      const backlog2 = { maxBacklog: 2 };
      await submitOne(store, limited(backlog2));
      await submitOne(store, limited(backlog2, { tenant: 'globex' }));
      await assertRefused(store, [limited(backlog2, { tenant: 'initech' })], 'QUEUE_BACKLOG_FULL');
      // Another first queue is not this one's backlog.
      assert.equal((await submitOne(store, limited(backlog2, { firstJob: stageJob('b') }))).created, true);
      const claimed = await claimOne(store);
      await submitOne(store, limited(backlog2));
      await assertRefused(store, [limited(backlog2)], 'QUEUE_BACKLOG_FULL');
      await failJob(store, claimed, { action: 'retry', delayMs: 60_000 });
      await claimOne(store);
      await assertRefused(store, [limited(backlog2)], 'QUEUE_BACKLOG_FULL');
    });

    test('50 concurrent submissions of a tenant with maxInFlightRuns 10 create exactly 10 runs', async ({ store }) => {
      const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => store.jobs.submit([limited({ maxInFlightRuns: 10 })])));
      const refused = outcomes.filter((o) => o.status === 'rejected');
      assert.equal(outcomes.length - refused.length, 10);
      for (const o of refused) assert.ok(o.reason instanceof AdmissionRefusedError && o.reason.code === 'TENANT_IN_FLIGHT_LIMIT', String(o.reason));
      assert.equal((await store.reads.listRuns({ limit: 100, tenant: 'acme' })).length, 10);
      assert.equal((await store.reads.listJobs({ limit: 100, queue: 'demo.a' })).length, 10);
    });
  });
}
