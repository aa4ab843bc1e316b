/**
 * Conformance, the store's root: `migrate`, `schemaVersion`, `now`, `onWake` and `close`.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { StoreUnavailableError } from '../../src/core/errors.ts';
import type { StoreHarness } from './fixture.ts';
import { assertRejectsWith, claimOne, complete, leaseOf, runRequest, settle, stageJob, storeTest, submit, unmigratedStoreTest } from './fixture.ts';

/** Declares the root's tests. */
export function describeRootPort(harness: StoreHarness): void {
  describe('root', () => {
    const test = storeTest(harness);
    const unmigrated = unmigratedStoreTest(harness);

    test('migrate is idempotent: a second call applies nothing and keeps the version', async ({ store, migration }) => {
      assert.ok(migration.version > 0);
      assert.ok(migration.applied.length > 0, 'the first migrate on a fresh store applies something');
      const again = await store.migrate();
      assert.deepEqual(again.applied, []);
      assert.equal(again.version, migration.version);
    });

    unmigrated('schemaVersion reports migrations pending before migrate, changes nothing, and reports none pending after', async ({ store }) => {
      const before = await store.schemaVersion();
      assert.ok(before.current < before.latest, `a store not yet migrated has migrations pending: ${JSON.stringify(before)}`);
      assert.deepEqual(await store.schemaVersion(), before, 'reading the version changes nothing');

      const migration = await store.migrate();
      assert.equal(migration.version, before.latest);
      assert.ok(migration.applied.length > 0);
      assert.deepEqual(migration.applied, [...migration.applied].sort((a, b) => a - b), 'applied in order');
      assert.ok(migration.applied.every((v) => v > before.current && v <= before.latest), 'only the pending versions are applied');
      assert.equal(migration.applied.at(-1), before.latest);
      assert.deepEqual(await store.schemaVersion(), { current: before.latest, latest: before.latest });
    });

    test('now is the store clock: it reads the same time and moves only when the clock does', async ({ store, clock }) => {
      assert.equal(await store.now(), clock.now());
      assert.equal(await store.now(), clock.now());
      await clock.advance(1_234);
      assert.equal(await store.now(), clock.now());
    });

    test('onWake fires for the queue of a submitted run, and stops after unsubscribing', async ({ store }) => {
      const woken: string[] = [];
      const unsubscribe = store.onWake((queue) => woken.push(queue));
      await submit(store);
      await settle();
      assert.ok(woken.includes('demo.a'), `woken: ${woken.join(', ')}`);

      unsubscribe();
      woken.length = 0;
      await submit(store);
      await settle();
      assert.deepEqual(woken, []);
    });

    test('onWake fires for the next stage queue when a stage completes', async ({ store }) => {
      await submit(store);
      const claimed = await claimOne(store);
      const woken: string[] = [];
      const unsubscribe = store.onWake((queue) => woken.push(queue));
      await complete(store, { lease: leaseOf(claimed), output: 1, durationMs: 1, next: stageJob('b') });
      await settle();
      unsubscribe();
      assert.ok(woken.includes('demo.b'), `woken: ${woken.join(', ')}`);
    });

    test('after close every call is refused with STORE_UNAVAILABLE, and closing again is harmless', async ({ store }) => {
      const run = await submit(store);
      await store.close();
      await assertRejectsWith(store.reads.getRun(run.id), StoreUnavailableError, 'STORE_UNAVAILABLE');
      await assertRejectsWith(store.jobs.submit([runRequest()]), StoreUnavailableError, 'STORE_UNAVAILABLE');
      await assertRejectsWith(store.jobs.claim([{ queue: 'demo.a', workerId: 'w1', limit: 1, leaseMs: 1_000 }]), StoreUnavailableError, 'STORE_UNAVAILABLE');
      await assertRejectsWith(store.now(), StoreUnavailableError, 'STORE_UNAVAILABLE');
      await store.close();
    });
  });
}
