/**
 * Conformance, locks sub-port: named locks with fences — acquire, held, renew and release by the
 * owner only, fences that grow across holders (and above every job and builder fence), expiry on
 * the store clock, reaping, operator reads, and one holder among concurrent acquirers. How a
 * completion's publications are fenced by its lock is in ./locks/publish.ts.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { LockAcquireRequest, LockAcquireResult, Lock } from '../../src/core/ports/locks.ts';
import type { Store } from '../../src/core/ports/store.ts';
import type { StoreHarness } from './fixture.ts';
import { build, claimNew, storeTest } from './fixture.ts';
import { describeLockedPublications } from './locks/publish.ts';

const KEY = 'render:asset_42';
const TTL_MS = 10_000;

/** An acquire of `key` by the caller holding `token`. */
function lockRequest(token: string, overrides: Partial<LockAcquireRequest> = {}): LockAcquireRequest {
  return { key: KEY, owner: `worker-${token}`, token, ttlMs: TTL_MS, ...overrides };
}

/** Acquires and asserts this caller now holds the lock; returns it. */
async function acquired(store: Store, token: string, overrides: Partial<LockAcquireRequest> = {}): Promise<Lock> {
  const result = await store.locks.acquire(lockRequest(token, overrides));
  assert.equal(result.status, 'acquired', `expected ${token} to acquire ${overrides.key ?? KEY}`);
  return (result as Extract<LockAcquireResult, { status: 'acquired' }>).lock;
}

/** Acquires and asserts someone else holds the lock; returns the holder. */
async function refused(store: Store, token: string, overrides: Partial<LockAcquireRequest> = {}): Promise<Lock> {
  const result = await store.locks.acquire(lockRequest(token, overrides));
  assert.equal(result.status, 'held', `expected ${overrides.key ?? KEY} to be held against ${token}`);
  return (result as Extract<LockAcquireResult, { status: 'held' }>).holder;
}

/** Declares the locks sub-port's tests. */
export function describeLocksPort(harness: StoreHarness): void {
  describe('locks sub-port', () => {
    const test = storeTest(harness);

    test('acquire takes a free key with a fence above every fence issued before, expiring on the store clock', async ({ store, clock }) => {
      const job = await claimNew(store);
      const builder = await build(store, 'entry', 'builder-token');
      await clock.advance(250);
      const now = await store.now();
      const lock = await acquired(store, 'a');
      assert.deepEqual(lock, { key: KEY, owner: 'worker-a', fence: lock.fence, acquiredAt: now, expiresAt: now + TTL_MS });
      assert.ok(lock.fence > (job.job.fence ?? Infinity), 'above the job fence issued before');
      assert.ok(lock.fence > (builder.builderFence ?? Infinity), 'above the builder fence issued before');
      assert.deepEqual(await store.locks.get(KEY), lock);
      const later = await claimNew(store);
      assert.ok((later.job.fence ?? 0) > lock.fence, 'a later job fence is above the lock fence: one sequence');
    });

    test('a live lock is held against every other token: the answer names the holder and changes nothing', async ({ store, clock }) => {
      const lock = await acquired(store, 'a');
      await clock.advance(TTL_MS - 1);
      assert.deepEqual(await refused(store, 'b'), lock);
      assert.deepEqual(await store.locks.get(KEY), lock, 'a refused acquire leaves the lock as it was');
      await acquired(store, 'b', { key: 'render:asset_43' });
    });

    test('the holder acquiring again keeps its fence and acquiredAt and is extended from now', async ({ store, clock }) => {
      const lock = await acquired(store, 'a');
      await clock.advance(4_000);
      const again = await acquired(store, 'a', { ttlMs: 20_000 });
      assert.deepEqual(again, { ...lock, expiresAt: (await store.now()) + 20_000 });
    });

    test('renew extends only the live locks its token holds, in input order', async ({ store, clock }) => {
      await acquired(store, 'a');
      await acquired(store, 'b', { key: 'other' });
      await clock.advance(3_000);
      const now = await store.now();
      const statuses = await store.locks.renew([
        { key: KEY, token: 'a', ttlMs: 5_000 },
        { key: KEY, token: 'b', ttlMs: 5_000 },
        { key: 'missing', token: 'a', ttlMs: 5_000 },
        { key: 'other', token: 'b', ttlMs: 7_000 },
      ]);
      assert.deepEqual(statuses, [
        { status: 'renewed', expiresAt: now + 5_000 },
        { status: 'lost' },
        { status: 'lost' },
        { status: 'renewed', expiresAt: now + 7_000 },
      ]);
      assert.equal((await store.locks.get(KEY))?.expiresAt, now + 5_000);
      assert.deepEqual(await store.locks.renew([]), []);
    });

    test('an expired lock is lost to its holder and may be taken over at once, with a higher fence', async ({ store, clock }) => {
      const first = await acquired(store, 'a');
      await clock.advance(TTL_MS);
      assert.deepEqual(await store.locks.renew([{ key: KEY, token: 'a', ttlMs: TTL_MS }]), [{ status: 'lost' }], 'expired at expiresAt');
      const second = await acquired(store, 'b');
      assert.ok(second.fence > first.fence);
      assert.equal(second.owner, 'worker-b');
      assert.deepEqual(await store.locks.renew([{ key: KEY, token: 'a', ttlMs: TTL_MS }]), [{ status: 'lost' }], "the old owner's late renew is refused");
      assert.equal(await store.locks.release(KEY, 'a'), 'not_owner', "the old owner's late release is refused");
      assert.deepEqual(await store.locks.get(KEY), second, 'and changes nothing');
    });

    test('release frees the lock for its owner only; an expired lock nobody took is still its owner to release', async ({ store, clock }) => {
      const lock = await acquired(store, 'a');
      assert.equal(await store.locks.release(KEY, 'b'), 'not_owner');
      assert.deepEqual(await store.locks.get(KEY), lock);
      await clock.advance(TTL_MS + 1);
      assert.equal(await store.locks.release(KEY, 'a'), 'released');
      assert.equal(await store.locks.get(KEY), null);
      assert.equal(await store.locks.release(KEY, 'a'), 'not_owner', 'released once');
      assert.equal(await store.locks.release('missing', 'a'), 'not_owner');
    });

    test('fences strictly grow from holder to holder, whether the key was released, expired or reaped', async ({ store, clock }) => {
      const fences = [(await acquired(store, 'a')).fence];
      await store.locks.release(KEY, 'a');
      fences.push((await acquired(store, 'b')).fence);
      await clock.advance(TTL_MS);
      fences.push((await acquired(store, 'c')).fence);
      await clock.advance(TTL_MS);
      assert.equal(await store.locks.reap(), 1);
      fences.push((await acquired(store, 'd')).fence);
      fences.push((await acquired(store, 'e', { key: 'other' })).fence);
      for (let i = 1; i < fences.length; i++) assert.ok((fences[i] ?? 0) > (fences[i - 1] ?? Infinity), `fences ${fences.join(', ')}`);
    });

    test('reap removes expired locks only and counts them', async ({ store, clock }) => {
      await acquired(store, 'a', { key: 'short-1', ttlMs: 1_000 });
      await acquired(store, 'b', { key: 'short-2', ttlMs: 1_000 });
      const kept = await acquired(store, 'c', { key: 'long', ttlMs: 60_000 });
      assert.equal(await store.locks.reap(), 0, 'nothing expired yet');
      await clock.advance(1_000);
      assert.equal(await store.locks.reap(), 2);
      assert.deepEqual(await store.locks.list(), [kept]);
      assert.equal(await store.locks.reap(), 0);
    });

    test('list returns locks by key, expired ones until reaped, up to the limit; stats count and age them on the store clock', async ({ store, clock }) => {
      assert.deepEqual(await store.locks.list(), []);
      assert.deepEqual(await store.locks.stats(), { held: 0, expired: 0, oldestHeldAgeMs: 0 });
      const b = await acquired(store, 'x', { key: 'b', ttlMs: 1_000 });
      await clock.advance(500);
      const a = await acquired(store, 'y', { key: 'a', ttlMs: 60_000 });
      await clock.advance(300);
      const c = await acquired(store, 'z', { key: 'C', ttlMs: 60_000 });
      assert.deepEqual(await store.locks.list(), [c, a, b], 'byte order');
      assert.deepEqual(await store.locks.list({ limit: 2 }), [c, a]);
      assert.deepEqual(await store.locks.stats(), { held: 3, expired: 0, oldestHeldAgeMs: 800 });
      await clock.advance(200);
      assert.deepEqual(await store.locks.stats(), { held: 2, expired: 1, oldestHeldAgeMs: 500 }, 'b expired at 1000 ms');
      await store.locks.renew([{ key: 'a', token: 'y', ttlMs: 60_000 }]);
      assert.equal((await store.locks.stats()).oldestHeldAgeMs, 500, 'a renewal keeps acquiredAt');
    });

    test('of concurrent acquirers of a free key exactly one holds it, and every other is told who', async ({ store }) => {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.locks.acquire(lockRequest(`t${i}`))));
      const winners = results.filter((r) => r.status === 'acquired');
      assert.equal(winners.length, 1, JSON.stringify(results));
      const holder = await store.locks.get(KEY);
      assert.ok(holder);
      for (const r of results) assert.deepEqual(r.status === 'acquired' ? r.lock : r.holder, holder);
    });
  });
  describeLockedPublications(harness);
}
