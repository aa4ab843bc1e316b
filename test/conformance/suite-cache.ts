/**
 * Conformance, cache sub-port: the single-flight cache — builder leases and fencing, hits and
 * TTL, stale while revalidate, negative entries, transient failures, lease renewal and
 * housekeeping.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { CacheAcquireResult } from '../../src/core/ports/cache.ts';
import type { StoreHarness } from './fixture.ts';
import { BUILD_LEASE_MS, CACHE, TTL_MS, acquire, build, buildReady, claimOne, completion, storeTest, submit } from './fixture.ts';

const PERMANENT = { code: 'UNSUPPORTED_FORMAT', message: 'not an image', class: 'permanent' };

/** The states of `results`, sorted, for counting who got what. */
function statesOf(results: readonly CacheAcquireResult[]): string[] {
  return results.map((r) => (r.state === 'stale' ? `stale:${String(r.revalidate)}` : r.state)).sort();
}

/** Builder acquisition, completion and fencing. */
function describeBuilders(harness: StoreHarness): void {
  describe('builders', () => {
    const test = storeTest(harness);

    test('get is null for a key never acquired', async ({ store }) => {
      assert.equal(await store.cache.get(CACHE, 'missing'), null);
    });

    test('acquiring a missing key makes the caller the builder with a fence above every fence issued before', async ({ store }) => {
      await submit(store);
      const job = await claimOne(store);
      const now = await store.now();
      const result = await acquire(store, 'k1', 'tok-a');
      assert.equal(result.state, 'build');
      const entry = result.entry;
      assert.equal(entry.cache, CACHE);
      assert.equal(entry.key, 'k1');
      assert.equal(entry.status, 'building');
      assert.equal(entry.value, null);
      assert.equal(entry.error, null);
      assert.equal(entry.builderOwner, 'owner-tok-a');
      assert.equal(entry.builderToken, 'tok-a');
      assert.equal(entry.builderUntil, now + BUILD_LEASE_MS);
      assert.equal(entry.updatedAt, now);
      assert.equal(typeof entry.builderFence, 'number');
      assert.ok((entry.builderFence ?? 0) > (job.job.fence ?? Infinity), 'a builder fence is above earlier job fences');
      assert.deepEqual(await store.cache.get(CACHE, 'k1'), entry);

      // The same key in another cache is another entry.
      const other = await build(store, 'k1', 'tok-b', { cache: 'other' });
      assert.ok((other.builderFence ?? 0) > (entry.builderFence ?? Infinity), 'builder fences only grow');
      await submit(store);
      const later = await claimOne(store);
      assert.ok((later.job.fence ?? 0) > (other.builderFence ?? Infinity), 'jobs and builders share one fence sequence');
    });

    test('a second acquirer while the builder lease is live is told building and changes nothing', async ({ store, clock }) => {
      const entry = await build(store, 'k', 'tok-a');
      await clock.advance(BUILD_LEASE_MS - 1);
      const second = await acquire(store, 'k', 'tok-b');
      assert.equal(second.state, 'building');
      assert.deepEqual(second.entry, entry);
      assert.deepEqual(await store.cache.get(CACHE, 'k'), entry);
    });

    test('eight concurrent acquirers of one key yield exactly one builder', async ({ store }) => {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => acquire(store, 'k', `tok-${i}`)));
      const builders = results.filter((r) => r.state === 'build');
      assert.equal(builders.length, 1);
      assert.deepEqual(statesOf(results), ['build', ...Array<string>(7).fill('building')]);
      const token = builders[0]?.entry.builderToken;
      for (const r of results) assert.equal(r.entry.builderToken, token, 'everyone sees the one builder');
      assert.equal((await store.cache.get(CACHE, 'k'))?.builderToken, token);
    });

    test('completing by the builder makes the entry ready and a hit for every caller until expiresAt = now + ttlMs', async ({ store, clock }) => {
      await build(store, 'k', 'tok-a');
      await clock.advance(500);
      const now = await store.now();
      const value = { artifact: 'sha256:01' };
      assert.equal(await store.cache.complete(completion('k', 'tok-a', value, TTL_MS, 0)), true);
      const entry = await store.cache.get(CACHE, 'k');
      assert.ok(entry);
      assert.equal(entry.status, 'ready');
      assert.deepEqual(entry.value, value);
      assert.equal(entry.error, null);
      assert.deepEqual(
        [entry.builderOwner, entry.builderToken, entry.builderFence, entry.builderUntil],
        [null, null, null, null],
        'completion clears the builder lease',
      );
      assert.equal(entry.expiresAt, now + TTL_MS);
      assert.equal(entry.staleUntil, null, 'staleMs 0: never stale');
      assert.equal(entry.updatedAt, now);
      for (const token of ['tok-b', 'tok-c', 'tok-a']) {
        const result = await acquire(store, 'k', token);
        assert.equal(result.state, 'hit');
        assert.deepEqual(result.entry, entry);
      }
      await clock.advance(TTL_MS - 1);
      assert.equal((await acquire(store, 'k', 'tok-d')).state, 'hit');
      assert.deepEqual(await store.cache.get(CACHE, 'k'), entry, 'hits change nothing');
    });

    test('completing with a token that is not the builder\'s returns false and changes nothing', async ({ store }) => {
      const entry = await build(store, 'k', 'tok-a');
      assert.equal(await store.cache.complete(completion('k', 'tok-x', { v: 1 })), false);
      assert.equal(await store.cache.complete(completion('missing', 'tok-a', { v: 1 })), false);
      assert.deepEqual(await store.cache.get(CACHE, 'k'), entry);
      assert.equal(await store.cache.get(CACHE, 'missing'), null);

      assert.equal(await store.cache.complete(completion('k', 'tok-a', { v: 1 })), true);
      const ready = await store.cache.get(CACHE, 'k');
      assert.equal(await store.cache.complete(completion('k', 'tok-a', { v: 2 })), false, 'a build completes once');
      assert.deepEqual(await store.cache.get(CACHE, 'k'), ready);
    });

    test('after the builder lease expires the next acquirer takes over with a higher fence and the old builder cannot complete', async ({ store, clock }) => {
      const first = await build(store, 'k', 'tok-a');
      await clock.advance(BUILD_LEASE_MS);
      const now = await store.now();
      const second = await build(store, 'k', 'tok-b');
      assert.equal(second.status, 'building');
      assert.equal(second.builderOwner, 'owner-tok-b');
      assert.equal(second.builderUntil, now + BUILD_LEASE_MS);
      assert.ok((second.builderFence ?? 0) > (first.builderFence ?? Infinity));

      assert.equal(await store.cache.complete(completion('k', 'tok-a', { by: 'a' })), false);
      assert.equal(await store.cache.fail({ cache: CACHE, key: 'k', token: 'tok-a' }), false);
      assert.deepEqual(await store.cache.get(CACHE, 'k'), second);
      assert.equal((await acquire(store, 'k', 'tok-c')).state, 'building');

      assert.equal(await store.cache.complete(completion('k', 'tok-b', { by: 'b' })), true);
      const hit = await acquire(store, 'k', 'tok-c');
      assert.equal(hit.state, 'hit');
      assert.deepEqual(hit.entry.value, { by: 'b' });
    });

    test('the builder completes past its lease as long as nobody took it over', async ({ store, clock }) => {
      await build(store, 'k', 'tok-a');
      await clock.advance(BUILD_LEASE_MS * 2);
      const now = await store.now();
      assert.equal(await store.cache.complete(completion('k', 'tok-a', { late: true })), true);
      const entry = await store.cache.get(CACHE, 'k');
      assert.equal(entry?.status, 'ready');
      assert.deepEqual(entry?.value, { late: true });
      assert.equal(entry?.expiresAt, now + TTL_MS);
      assert.equal((await acquire(store, 'k', 'tok-b')).state, 'hit');
    });

    test('renew extends the builder lease by leaseMs from now, and is false for a token that no longer builds', async ({ store, clock }) => {
      const first = await build(store, 'k', 'tok-a');
      await clock.advance(8_000);
      const now = await store.now();
      assert.equal(await store.cache.renew(CACHE, 'k', 'tok-a', BUILD_LEASE_MS), true);
      const renewed = await store.cache.get(CACHE, 'k');
      assert.equal(renewed?.builderUntil, now + BUILD_LEASE_MS);
      assert.equal(renewed?.builderToken, 'tok-a');
      assert.equal(renewed?.builderFence, first.builderFence, 'renewing keeps the fence');

      await clock.advance(BUILD_LEASE_MS - 1);
      assert.equal((await acquire(store, 'k', 'tok-b')).state, 'building', 'the renewed lease holds past the first expiry');
      await clock.advance(1);
      await build(store, 'k', 'tok-b');
      assert.equal(await store.cache.renew(CACHE, 'k', 'tok-a', BUILD_LEASE_MS), false);
      assert.equal((await store.cache.get(CACHE, 'k'))?.builderToken, 'tok-b');
      assert.equal(await store.cache.renew(CACHE, 'missing', 'tok-a', BUILD_LEASE_MS), false);

      assert.equal(await store.cache.complete(completion('k', 'tok-b', { v: 1 })), true);
      const ready = await store.cache.get(CACHE, 'k');
      assert.equal(await store.cache.renew(CACHE, 'k', 'tok-b', BUILD_LEASE_MS), false, 'a completed build holds no lease');
      assert.deepEqual(await store.cache.get(CACHE, 'k'), ready);
    });
  });
}

/** Expiry, stale-while-revalidate and failures. */
function describeExpiry(harness: StoreHarness): void {
  describe('expiry, stale-while-revalidate and failures', () => {
    const test = storeTest(harness);

    test('a ready entry is never a hit from expiresAt on: the next caller rebuilds it', async ({ store, clock }) => {
      const ready = await buildReady(store, 'k', { v: 1 }, 1_000, 0);
      await clock.advance(999);
      assert.equal((await acquire(store, 'k', 'tok-x')).state, 'hit');
      await clock.advance(1);
      const rebuilt = await build(store, 'k', 'tok-b');
      assert.equal(rebuilt.status, 'building');
      assert.equal(rebuilt.value, null, 'an expired value is not served');
      assert.equal((await acquire(store, 'k', 'tok-c')).state, 'building');
      assert.equal(await store.cache.complete(completion('k', 'tok-b', { v: 2 }, 1_000, 0)), true);
      const hit = await acquire(store, 'k', 'tok-c');
      assert.equal(hit.state, 'hit');
      assert.deepEqual(hit.entry.value, { v: 2 });
      assert.ok((hit.entry.expiresAt ?? 0) > (ready.expiresAt ?? Infinity));
    });

    test('stale while revalidating: the first caller past expiresAt revalidates, the others get the old value, completing refreshes it', async ({ store, clock }) => {
      const ready = await buildReady(store, 'k', { v: 1 }, 1_000, 5_000);
      assert.equal(ready.staleUntil, (ready.expiresAt ?? 0) + 5_000);
      await clock.advance(1_000);
      const first = await acquire(store, 'k', 'tok-b');
      assert.equal(first.state, 'stale');
      assert.equal(first.state === 'stale' && first.revalidate, true);
      assert.equal(first.entry.status, 'ready');
      assert.deepEqual(first.entry.value, { v: 1 }, 'the old value is still served');
      assert.equal(first.entry.builderToken, 'tok-b');
      assert.equal(typeof first.entry.builderFence, 'number');

      const others = await Promise.all(['tok-c', 'tok-d', 'tok-e'].map((t) => acquire(store, 'k', t)));
      assert.deepEqual(statesOf(others), ['stale:false', 'stale:false', 'stale:false']);
      for (const other of others) assert.deepEqual(other.entry.value, { v: 1 });

      await clock.advance(100);
      const now = await store.now();
      assert.equal(await store.cache.complete(completion('k', 'tok-b', { v: 2 }, 1_000, 5_000)), true);
      const hit = await acquire(store, 'k', 'tok-f');
      assert.equal(hit.state, 'hit');
      assert.deepEqual(hit.entry.value, { v: 2 });
      assert.equal(hit.entry.expiresAt, now + 1_000);
      assert.equal(hit.entry.staleUntil, now + 6_000);
      assert.equal(hit.entry.builderToken, null);
    });

    test('eight concurrent callers of a stale entry yield exactly one revalidator', async ({ store, clock }) => {
      await buildReady(store, 'k', { v: 1 }, 1_000, 5_000);
      await clock.advance(2_000);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => acquire(store, 'k', `tok-${i}`)));
      assert.deepEqual(statesOf(results), [...Array<string>(7).fill('stale:false'), 'stale:true']);
    });

    test('when a revalidator\'s lease expires within the stale window the next caller takes over the revalidation', async ({ store, clock }) => {
      await buildReady(store, 'k', { v: 1 }, 1_000, 60_000);
      await clock.advance(1_000);
      const first = await acquire(store, 'k', 'tok-a');
      assert.equal(first.state === 'stale' && first.revalidate, true);
      await clock.advance(BUILD_LEASE_MS);
      const second = await acquire(store, 'k', 'tok-b');
      assert.equal(second.state === 'stale' && second.revalidate, true);
      assert.ok((second.entry.builderFence ?? 0) > (first.entry.builderFence ?? Infinity));
      assert.equal(await store.cache.complete(completion('k', 'tok-a', { v: 'old builder' })), false);
      assert.deepEqual((await store.cache.get(CACHE, 'k'))?.value, { v: 1 });
      assert.equal(await store.cache.complete(completion('k', 'tok-b', { v: 2 })), true);
    });

    test('renewing a revalidation lease keeps the old value served stale and keeps other callers from revalidating', async ({ store, clock }) => {
      const ready = await buildReady(store, 'k', { v: 1 }, 1_000, 60_000);
      await clock.advance(1_000);
      const first = await acquire(store, 'k', 'tok-a');
      assert.equal(first.state === 'stale' && first.revalidate, true);
      await clock.advance(8_000);
      const now = await store.now();
      assert.equal(await store.cache.renew(CACHE, 'k', 'tok-a', BUILD_LEASE_MS), true);
      const renewed = await store.cache.get(CACHE, 'k');
      assert.equal(renewed?.status, 'ready');
      assert.deepEqual(renewed?.value, { v: 1 });
      assert.equal(renewed?.expiresAt, ready.expiresAt);
      assert.equal(renewed?.builderToken, 'tok-a');
      assert.equal(renewed?.builderFence, first.entry.builderFence);
      assert.equal(renewed?.builderUntil, now + BUILD_LEASE_MS);

      await clock.advance(BUILD_LEASE_MS - 1);
      const other = await acquire(store, 'k', 'tok-b');
      assert.equal(other.state === 'stale' && !other.revalidate, true, 'the renewed revalidation still holds');
      assert.deepEqual(other.entry.value, { v: 1 });
      await clock.advance(1);
      const takeover = await acquire(store, 'k', 'tok-c');
      assert.equal(takeover.state === 'stale' && takeover.revalidate, true, 'an expired revalidation is taken over');
    });

    test('past staleUntil nothing is servable: the next caller builds from scratch', async ({ store, clock }) => {
      await buildReady(store, 'k', { v: 1 }, 1_000, 5_000);
      await clock.advance(6_000);
      const result = await acquire(store, 'k', 'tok-b');
      assert.equal(result.state, 'build');
      assert.equal(result.entry.status, 'building');
      assert.equal(result.entry.value, null);
      assert.equal((await acquire(store, 'k', 'tok-c')).state, 'building');
    });

    test('a permanent failure becomes a negative entry served with its error until ttlMs, then the key is rebuilt', async ({ store, clock }) => {
      const building = await build(store, 'k', 'tok-a');
      await clock.advance(200);
      const now = await store.now();
      assert.equal(await store.cache.fail({ cache: CACHE, key: 'k', token: 'tok-a', negative: { error: PERMANENT, ttlMs: 5_000 } }), true);
      const failed = await store.cache.get(CACHE, 'k');
      assert.ok(failed);
      assert.equal(failed.status, 'failed');
      assert.deepEqual(failed.error, PERMANENT);
      assert.equal(failed.value, null);
      assert.equal(failed.builderToken, null);
      assert.equal(failed.builderUntil, null);
      assert.equal(failed.expiresAt, now + 5_000);
      assert.equal(failed.updatedAt, now);

      for (const token of ['tok-b', 'tok-c']) {
        const result = await acquire(store, 'k', token);
        assert.equal(result.state, 'negative');
        assert.deepEqual(result.entry.error, PERMANENT);
      }
      await clock.advance(4_999);
      assert.equal((await acquire(store, 'k', 'tok-d')).state, 'negative');
      await clock.advance(1);
      const rebuilt = await build(store, 'k', 'tok-e');
      assert.equal(rebuilt.status, 'building');
      assert.equal(rebuilt.error, null);
      assert.ok((rebuilt.builderFence ?? 0) > (building.builderFence ?? Infinity));
    });

    test('a transient failure of a building entry removes it, so the next caller builds', async ({ store }) => {
      const first = await build(store, 'k', 'tok-a');
      assert.equal(await store.cache.fail({ cache: CACHE, key: 'k', token: 'tok-a' }), true);
      assert.equal(await store.cache.get(CACHE, 'k'), null);
      const next = await build(store, 'k', 'tok-b');
      assert.ok((next.builderFence ?? 0) > (first.builderFence ?? Infinity));
    });

    test('a transient failure of a revalidation releases the lease and keeps the old value ready', async ({ store, clock }) => {
      const ready = await buildReady(store, 'k', { v: 1 }, 1_000, 60_000);
      await clock.advance(1_000);
      assert.equal((await acquire(store, 'k', 'tok-a')).state, 'stale');
      assert.equal(await store.cache.fail({ cache: CACHE, key: 'k', token: 'tok-a' }), true);
      const after = await store.cache.get(CACHE, 'k');
      assert.ok(after);
      assert.equal(after.status, 'ready');
      assert.deepEqual(after.value, { v: 1 });
      assert.equal(after.expiresAt, ready.expiresAt);
      assert.equal(after.staleUntil, ready.staleUntil);
      assert.deepEqual([after.builderOwner, after.builderToken, after.builderFence, after.builderUntil], [null, null, null, null]);
      const next = await acquire(store, 'k', 'tok-b');
      assert.equal(next.state === 'stale' && next.revalidate, true, 'the next caller may revalidate at once');
    });

    test('fail with a token that is not the builder\'s returns false and changes nothing', async ({ store }) => {
      const entry = await build(store, 'k', 'tok-a');
      const negative = { error: PERMANENT, ttlMs: 5_000 };
      assert.equal(await store.cache.fail({ cache: CACHE, key: 'k', token: 'tok-x', negative }), false);
      assert.equal(await store.cache.fail({ cache: CACHE, key: 'k', token: 'tok-x' }), false);
      assert.equal(await store.cache.fail({ cache: CACHE, key: 'missing', token: 'tok-a' }), false);
      assert.deepEqual(await store.cache.get(CACHE, 'k'), entry);
      assert.equal(await store.cache.get(CACHE, 'missing'), null);
    });
  });
}

/** `cache.deleteExpired`. */
function describeHousekeeping(harness: StoreHarness): void {
  describe('housekeeping', () => {
    const test = storeTest(harness);

    test('deleteExpired removes exactly the entries that can no longer be served and returns how many', async ({ store, clock }) => {
      const graceMs = 2_000;
      // All made at t0 (or t0 + 3s for revalidations), judged at t0 + 10s.
      const cases: { key: string; deleted: boolean }[] = [];
      const ready = async (key: string, ttlMs: number, staleMs: number, deleted: boolean): Promise<void> => {
        await buildReady(store, key, { key }, ttlMs, staleMs);
        cases.push({ key, deleted });
      };
      await ready('ready-fresh', 20_000, 0, false);
      await ready('ready-in-stale-window', 5_000, 10_000, false);
      await ready('ready-expired-not-stale-able', 5_000, 0, true);
      await ready('ready-past-stale-until', 2_000, 3_000, true);
      await ready('revalidating-live-builder-past-stale-until', 2_000, 3_000, false);
      await ready('revalidating-expired-builder-past-stale-until', 2_000, 3_000, true);
      const negative = async (key: string, ttlMs: number, deleted: boolean): Promise<void> => {
        await build(store, key, `tok-${key}`);
        const failed = { cache: CACHE, key, token: `tok-${key}`, negative: { error: PERMANENT, ttlMs } };
        assert.equal(await store.cache.fail(failed), true);
        cases.push({ key, deleted });
      };
      await negative('failed-fresh', 20_000, false);
      await negative('failed-expired', 5_000, true);
      const building = async (key: string, leaseMs: number, deleted: boolean): Promise<void> => {
        await build(store, key, `tok-${key}`, { leaseMs });
        cases.push({ key, deleted });
      };
      await building('building-live', 30_000, false);
      await building('building-expired-within-grace', 8_500, false);
      await building('building-expired-beyond-grace', 5_000, true);

      await clock.advance(3_000);
      const live = await acquire(store, 'revalidating-live-builder-past-stale-until', 'tok-r1', { leaseMs: 30_000 });
      assert.equal(live.state === 'stale' && live.revalidate, true);
      const expired = await acquire(store, 'revalidating-expired-builder-past-stale-until', 'tok-r2', { leaseMs: 1_000 });
      assert.equal(expired.state === 'stale' && expired.revalidate, true);
      await clock.advance(7_000);

      const deletedCount = await store.cache.deleteExpired(graceMs);
      const remaining: Record<string, boolean> = {};
      for (const c of cases) remaining[c.key] = (await store.cache.get(CACHE, c.key)) !== null;
      const expected = Object.fromEntries(cases.map((c) => [c.key, !c.deleted]));
      assert.deepEqual(remaining, expected);
      assert.equal(deletedCount, cases.filter((c) => c.deleted).length);
      assert.equal(await store.cache.deleteExpired(graceMs), 0, 'nothing left to delete');
      assert.equal((await acquire(store, 'ready-fresh', 'tok-z')).state, 'hit', 'kept entries still serve');
    });

    test('list filters by status and cache, orders by cache then key, and changes nothing', async ({ store }) => {
      await buildReady(store, 'b-ready', { n: 1 });
      await build(store, 'b-building', 'tok-b');
      await build(store, 'a-building', 'tok-a');
      await build(store, 'x', 'tok-other', { cache: 'other' });
      const keys = async (query: Parameters<typeof store.cache.list>[0]): Promise<string[]> =>
        (await store.cache.list(query)).map((e) => `${e.cache}/${e.key}/${e.status}`);

      assert.deepEqual(await keys({ limit: 10 }), ['other/x/building', `${CACHE}/a-building/building`, `${CACHE}/b-building/building`, `${CACHE}/b-ready/ready`]);
      assert.deepEqual(await keys({ status: 'building', cache: CACHE, limit: 10 }), [`${CACHE}/a-building/building`, `${CACHE}/b-building/building`]);
      assert.deepEqual(await keys({ status: 'ready', limit: 10 }), [`${CACHE}/b-ready/ready`]);
      assert.deepEqual(await keys({ status: 'building', limit: 1 }), ['other/x/building']);
      const [entry] = await store.cache.list({ cache: CACHE, status: 'building', limit: 1 });
      assert.deepEqual(entry, await store.cache.get(CACHE, 'a-building'), 'the same entry get reads, builder lease included');
    });
  });
}

/** Declares the cache sub-port's tests: `acquire`, `get`, `complete`, `fail`, `renew`, `deleteExpired`, `list`. */
export function describeCachePort(harness: StoreHarness): void {
  describe('cache sub-port', () => {
    describeBuilders(harness);
    describeExpiry(harness);
    describeHousekeeping(harness);
  });
}
