/**
 * Conformance, requests sub-port: remembered client requests (`Idempotency-Key`).
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { StoreHarness } from './fixture.ts';
import { storeTest } from './fixture.ts';

/** Declares the requests sub-port's tests: `remember`, `get`. */
export function describeRequestsPort(harness: StoreHarness): void {
  describe('requests sub-port', () => {
    const test = storeTest(harness);

    test('the first request of a scope and key is stored; later ones get the first record back', async ({ store, clock }) => {
      const now = await store.now();
      const first = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: { runId: 'run_1' } });
      const stored = { scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: { runId: 'run_1' }, createdAt: now };
      assert.deepEqual(first, { created: true, record: stored });

      await clock.advance(1_000);
      const again = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h2', value: { runId: 'run_2' } });
      assert.deepEqual(again, { created: false, record: stored }, 'the first record wins, whatever the later one says');
      const same = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: { runId: 'run_1' } });
      assert.deepEqual(same, { created: false, record: stored });
    });

    test('scopes and keys are independent', async ({ store, clock }) => {
      await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: 1 });
      await clock.advance(10);
      const now = await store.now();
      const otherScope = await store.requests.remember({ scope: 'POST /assets', key: 'idem-1', requestHash: 'h2', value: 2 });
      assert.deepEqual(otherScope, {
        created: true,
        record: { scope: 'POST /assets', key: 'idem-1', requestHash: 'h2', value: 2, createdAt: now },
      });
      const otherKey = await store.requests.remember({ scope: 'POST /qr', key: 'idem-2', requestHash: 'h3', value: 3 });
      assert.equal(otherKey.created, true);
      assert.equal(otherKey.record.requestHash, 'h3');
      const original = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'hx', value: 0 });
      assert.equal(original.created, false);
      assert.equal(original.record.requestHash, 'h1');
      assert.equal(original.record.value, 1);
    });

    test('concurrent first requests of one scope and key create exactly one record', async ({ store }) => {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.requests.remember({ scope: 'POST /qr', key: 'race', requestHash: `h${i}`, value: i }),
        ),
      );
      assert.equal(results.filter((r) => r.created).length, 1);
      const winner = results.find((r) => r.created)?.record;
      for (const r of results) assert.deepEqual(r.record, winner);
    });

    test('get reads a remembered request and changes nothing; unknown ones are null', async ({ store }) => {
      assert.equal(await store.requests.get('POST /qr', 'idem-1'), null);
      const { record } = await store.requests.remember({ scope: 'POST /qr', key: 'idem-1', requestHash: 'h1', value: { canonical: { a: 1 } } });
      assert.deepEqual(await store.requests.get('POST /qr', 'idem-1'), record);
      assert.equal(await store.requests.get('POST /assets', 'idem-1'), null);
      const after = await store.requests.remember({ scope: 'POST /qr', key: 'idem-2', requestHash: 'h2', value: null });
      assert.equal(after.created, true, 'reading a key never creates it');
    });
  });
}
