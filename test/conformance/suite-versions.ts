/**
 * Conformance, versions sub-port: race-free counters.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { StoreHarness } from './fixture.ts';
import { storeTest } from './fixture.ts';

const SUBJECT = 'asset_42';

/** Declares the versions sub-port's tests: `allocate`. */
export function describeVersionsPort(harness: StoreHarness): void {
  describe('versions sub-port', () => {
    const test = storeTest(harness);

    test('allocate hands out 1, 2, 3, ... for one scope and key', async ({ store }) => {
      const versions = [];
      for (let i = 0; i < 3; i++) versions.push(await store.versions.allocate('assets', SUBJECT));
      assert.deepEqual(versions, [1, 2, 3]);
    });

    test('each scope and key counts on its own', async ({ store }) => {
      assert.equal(await store.versions.allocate('assets', 'a'), 1);
      assert.equal(await store.versions.allocate('assets', 'a'), 2);
      assert.equal(await store.versions.allocate('assets', 'b'), 1);
      assert.equal(await store.versions.allocate('other', 'a'), 1);
      assert.equal(await store.versions.allocate('assets', 'a'), 3);
      assert.equal(await store.versions.allocate('other', 'b'), 1);
    });

    test('concurrent calls get every value from 1 to n exactly once', async ({ store }) => {
      const versions = await Promise.all(Array.from({ length: 8 }, () => store.versions.allocate('assets', 'race')));
      assert.deepEqual([...versions].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8]);
      assert.equal(await store.versions.allocate('assets', 'race'), 9);
    });
  });
}
