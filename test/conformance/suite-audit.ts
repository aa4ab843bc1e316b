/**
 * Conformance, audit sub-port: paged read-only scans for `kiln verify`. Through the port a store
 * can only be healthy, so these tests pin down what each scan returns from healthy states, how
 * pages follow one another and where a scan ends; the verify tests (test/integration/verify.test.ts,
 * test/e2e/cli-verify.test.ts) break invariants on purpose in each store and see them found.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ValidationError } from '../../src/core/errors.ts';
import type { AuditPage, AuditPageRequest } from '../../src/core/ports/audit.ts';
import type { StoreHarness } from './fixture.ts';
import {
  CACHE,
  LEASE_MS,
  acquire,
  art,
  assertRejectsWith,
  build,
  buildReady,
  claim,
  claimNew,
  claimOne,
  complete,
  failJob,
  failure,
  leaseOf,
  publish,
  rollbackJob,
  storeTest,
  submit,
} from './fixture.ts';

/** Reads a whole scan with pages of `limit`, checking each page; returns the pages. */
async function scanAll<T>(read: (page: AuditPageRequest) => Promise<AuditPage<T>>, limit: number): Promise<AuditPage<T>[]> {
  const pages: AuditPage<T>[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await read({ after, limit });
    assert.ok(page.scanned <= limit, `a page reads at most its limit (${page.scanned} > ${limit})`);
    assert.ok(page.items.length <= page.scanned || page.scanned === 0, 'a page holds no more items than rows it read');
    pages.push(page);
    if (page.next === null) return pages;
    assert.ok(pages.length < 100, 'the scan ends');
    after = page.next;
  }
}

/** The items of a whole scan, in order. */
async function itemsOf<T>(read: (page: AuditPageRequest) => Promise<AuditPage<T>>, limit: number): Promise<T[]> {
  return (await scanAll(read, limit)).flatMap((page) => page.items);
}

/** Declares the audit sub-port's tests. */
export function describeAuditPort(harness: StoreHarness): void {
  describe('audit sub-port', () => {
    const test = storeTest(harness);

    test('every scan of an empty store is one empty page that ends the scan', async ({ store }) => {
      const empty = { items: [], scanned: 0, next: null };
      assert.deepEqual(await store.audit.publications({ limit: 10 }), empty);
      assert.deepEqual(await store.audit.readyCacheEntries({ limit: 10 }), empty);
      assert.deepEqual(await store.audit.expiredLeases({ limit: 10, graceMs: 0 }), empty);
      assert.deepEqual(await store.audit.runJobs({ limit: 10 }), empty);
      assert.deepEqual(await store.audit.ledgerMismatches({ limit: 10 }), empty);
    });

    test('publications are read in (subject, profile) order, page after page, each once', async ({ store }) => {
      await publish(store, [
        { subjectId: 'b', profile: 'thumb', artifactRef: art(1), subjectVersion: 1 },
        { subjectId: 'a', profile: 'preview', artifactRef: art(2), subjectVersion: 3 },
        { subjectId: 'a', profile: 'Big', artifactRef: art(3), subjectVersion: 3 },
      ]);
      await publish(store, [
        { subjectId: 'c', profile: 'thumb', artifactRef: art(4), subjectVersion: 1 },
        { subjectId: 'a', profile: 'thumb', artifactRef: art(5), subjectVersion: 3 },
      ]);
      const pages = await scanAll((page) => store.audit.publications(page), 2);
      assert.deepEqual(
        pages.map((p) => p.scanned),
        [2, 2, 1],
      );
      const items = pages.flatMap((p) => p.items);
      assert.deepEqual(
        items.map((p) => [p.subjectId, p.profile, p.artifactRef]),
        [
          ['a', 'Big', art(3)],
          ['a', 'preview', art(2)],
          ['a', 'thumb', art(5)],
          ['b', 'thumb', art(1)],
          ['c', 'thumb', art(4)],
        ],
      );
      for (const item of items) assert.deepEqual(item, await store.publications.get(item.subjectId, item.profile));
      const exact = await scanAll((page) => store.audit.publications(page), 5);
      assert.equal(exact.length, 2, 'a full page does not know it was the last: one more, empty page ends the scan');
      assert.deepEqual(exact[1], { items: [], scanned: 0, next: null });
    });

    test('ready cache entries that reference artifacts are read in (cache, key) order with their refs; others only counted', async ({ store, clock }) => {
      await buildReady(store, 'k3', { artifact: art(7), thumbs: [art(2), art(7)] });
      await buildReady(store, 'k1', { artifact: art(1) });
      await buildReady(store, 'k2', { width: 64, note: 'no artifact here' });
      await buildReady(store, 'k4', { artifact: art(9) }, 1_000);
      await build(store, 'k0-building', 't-building');
      await build(store, 'k5-negative', 't-negative');
      const negative = { error: { code: 'ASSET_UNREADABLE', message: 'bad', class: 'permanent' }, ttlMs: 60_000 };
      assert.equal(await store.cache.fail({ cache: CACHE, key: 'k5-negative', token: 't-negative', negative }), true);
      await buildReady(store, 'k9', { artifact: art(3) });
      await store.cache.acquire({ cache: 'another', key: 'a', owner: 'o', token: 't-other', leaseMs: 10_000 });
      await clock.advance(2_000);
      assert.equal((await acquire(store, 'k4', 't-again')).state, 'build', 'k4 expired: rebuilt, it is building now');

      const pages = await scanAll((page) => store.audit.readyCacheEntries(page), 2);
      assert.deepEqual(
        pages.map((p) => p.scanned),
        [2, 2, 0],
        'four ready entries: k1, k2, k3, k9 (two full pages, then the empty page that ends the scan)',
      );
      assert.deepEqual(
        pages.flatMap((p) => p.items),
        [
          { cache: CACHE, key: 'k1', artifactRefs: [art(1)] },
          { cache: CACHE, key: 'k3', artifactRefs: [art(2), art(7)] },
          { cache: CACHE, key: 'k9', artifactRefs: [art(3)] },
        ],
      );
    });

    test('expiredLeases lists leased jobs past their lease by more than the grace, by lease end, with how long ago it ended', async ({ store, clock }) => {
      const early = await claimNew(store);
      await clock.advance(1_000);
      const late = await claimNew(store);
      const renewed = await claimNew(store);
      const done = await claimNew(store);
      await complete(store, { lease: leaseOf(done), output: null, durationMs: 1, next: null });
      const released = await claimNew(store);
      assert.equal(await store.jobs.release([leaseOf(released)]), 1);
      await clock.advance(19_000);
      assert.equal((await store.jobs.renew([leaseOf(renewed)]))[0]?.status, 'renewed');
      await clock.advance(16_000);

      // Now `early` ended 6 s ago and `late` 5 s ago; `renewed` holds its lease 14 s more.
      const expired = (graceMs: number, limit = 10) => itemsOf((page) => store.audit.expiredLeases({ ...page, graceMs }), limit);
      assert.deepEqual(await expired(6_000), [], 'within the grace');
      assert.deepEqual(
        (await expired(5_500)).map((e) => [e.jobId, e.overdueMs]),
        [[early.job.id, 6_000]],
      );
      const all = await expired(0, 1);
      assert.deepEqual(
        all.map((e) => [e.jobId, e.overdueMs]),
        [
          [early.job.id, 6_000],
          [late.job.id, 5_000],
        ],
      );
      assert.deepEqual(all[0], {
        jobId: early.job.id,
        runId: early.job.runId,
        queue: 'demo.a',
        stage: 'a',
        kind: 'stage',
        leaseOwner: 'w1',
        leaseUntil: early.job.leaseUntil,
        overdueMs: 6_000,
      });

      const [redelivered] = await claim(store, { queue: 'demo.a', workerId: 'w2', limit: 1, leaseMs: LEASE_MS });
      assert.equal(redelivered?.job.id, early.job.id, 'a claim takes the oldest expired lease over');
      assert.deepEqual(
        (await expired(0)).map((e) => e.jobId),
        [late.job.id],
      );
      await store.jobs.reap();
      assert.deepEqual(await expired(0), [], 'the reaper took the rest back');
    });

    test('runJobs reads every run by id and returns those not ended, and ended ones with a live job, with all their jobs', async ({ store, clock }) => {
      // Each claim takes the only ready job of its queue: the queued run and the compensation come last.
      const running = (await claimNew(store)).job;
      const parked = await claimNew(store);
      await failJob(store, parked, { action: 'park' });
      const dead = await claimNew(store);
      await failJob(store, dead, { action: 'dead_letter', rollback: null });
      const failed = await claimNew(store);
      await failJob(store, failed, { action: 'fail', rollback: null }, failure('permanent'));
      const succeeded = await claimNew(store, 'c');
      await complete(store, { lease: leaseOf(succeeded), output: null, durationMs: 1, next: null });
      const compensating = await claimNew(store, 'b');
      await failJob(store, compensating, { action: 'fail', rollback: rollbackJob('a') }, failure('permanent'));
      const cancelled = await submit(store);
      await store.operator.cancelRun(cancelled.id, 'test');
      const queued = await submit(store);
      await clock.advance(1);

      const pages = await scanAll((page) => store.audit.runJobs(page), 3);
      assert.deepEqual(
        pages.map((p) => p.scanned),
        [3, 3, 2],
        'eight runs, three per page',
      );
      const runs = pages.flatMap((p) => p.items);
      const byId = new Map(runs.map((r) => [r.runId, r]));
      assert.deepEqual(
        runs.map((r) => r.runId),
        [...byId.keys()].sort(),
        'by run id',
      );
      const shape = (runId: string) => {
        const run = byId.get(runId);
        return run && { status: run.status, jobs: run.jobs.map((j) => `${j.stage}:${j.kind}:${j.state}`) };
      };
      assert.deepEqual(shape(queued.id), { status: 'queued', jobs: ['a:stage:ready'] });
      assert.deepEqual(shape(running.runId), { status: 'running', jobs: ['a:stage:leased'] });
      assert.deepEqual(shape(parked.job.runId), { status: 'parked', jobs: ['a:stage:parked'] });
      assert.deepEqual(shape(dead.job.runId), { status: 'dead_lettered', jobs: ['a:stage:dead'] });
      const compensation = shape(compensating.job.runId);
      assert.equal(compensation?.status, 'running');
      assert.deepEqual([...(compensation?.jobs ?? [])].sort(), ['a:rollback:ready', 'b:stage:dead']);
      for (const ended of [failed.job.runId, cancelled.id, succeeded.job.runId]) assert.equal(byId.has(ended), false, 'an ended run without a live job is not listed');
      const running1 = byId.get(running.runId);
      assert.deepEqual(running1 && { pipeline: running1.pipeline, currentStage: running1.currentStage, jobs: running1.jobs.map((j) => j.id) }, {
        pipeline: 'demo',
        currentStage: 'a',
        jobs: [running.id],
      });
    });

    test('ledgerMismatches finds none in a store changed only through its ports, reading every run once', async ({ store }) => {
      const compensated = await claimNew(store, 'b');
      await failJob(store, compensated, { action: 'fail', rollback: rollbackJob('a') }, failure('permanent'));
      const rollback = await claimOne(store, 'demo.a');
      assert.equal(rollback.job.kind, 'rollback');
      assert.equal((await complete(store, { lease: leaseOf(rollback), output: { undone: true }, durationMs: 1, next: null })).outcome, 'committed');
      const ledger = await store.reads.readLedger(compensated.job.runId);
      assert.deepEqual(
        ledger.map((e) => `${e.stage}:${e.kind}`),
        ['a:stage', 'a:rollback'],
        'the compensated run has a stage and a rollback entry',
      );
      const finished = await claimNew(store, 'c');
      await complete(store, { lease: leaseOf(finished), output: null, durationMs: 1, next: null });
      await claimNew(store, 'b');
      const cancelled = await submit(store);
      await store.operator.cancelRun(cancelled.id, 'test');
      await submit(store);
      const runs = (await store.reads.listRuns({ limit: 100 })).length;
      assert.equal(runs, 5);

      const pages = await scanAll((page) => store.audit.ledgerMismatches(page), 2);
      assert.deepEqual(
        pages.flatMap((p) => p.items),
        [],
      );
      assert.deepEqual(
        pages.map((p) => p.scanned),
        [2, 2, 1],
      );
    });

    test('a cursor of another scan or of no scan is refused as a validation error', async ({ store }) => {
      await publish(store, [{ subjectId: 's', profile: 'p', artifactRef: art(1), subjectVersion: 1 }]);
      const { next } = await store.audit.publications({ limit: 1 });
      assert.ok(next);
      await assertRejectsWith(store.audit.runJobs({ after: next, limit: 1 }), ValidationError, 'VALIDATION_FAILED');
      await assertRejectsWith(store.audit.expiredLeases({ after: 'not a cursor', limit: 1, graceMs: 0 }), ValidationError, 'VALIDATION_FAILED');
    });
  });
}
