/**
 * Single-flight across connections on Redis: two stores on one key space, each with its own
 * connection (to the server, two clients, as two processes would be), race the calls whose
 * answer must be given to exactly one caller: `cache.acquire` of a missing key, `locks.acquire`
 * of a free key, `requests.remember` of a new key, and `versions.allocate` (each value once).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/core/ports/store.ts';
import { createStoreName, redisSkipReason } from '../support/redis-server.ts';
import { useRedisStores } from '../support/redis-stores.ts';

const skip = redisSkipReason();
const KEYS = Array.from({ length: 20 }, (_, i) => `key-${i}`);
/** Callers per key on each store. */
const CALLERS = 4;

/** `call(store, key, caller)` for every key, CALLERS times on each store, all at once; results by key. */
async function race<T>(stores: readonly Store[], call: (store: Store, key: string, caller: string) => Promise<T>): Promise<Map<string, T[]>> {
  const byKey = new Map<string, T[]>();
  await Promise.all(
    KEYS.flatMap((key) =>
      stores.flatMap((store, side) =>
        Array.from({ length: CALLERS }, async (_, n) => {
          const result = await call(store, key, `${side}-${n}`);
          byKey.set(key, [...(byKey.get(key) ?? []), result]);
        }),
      ),
    ),
  );
  return byKey;
}

describe('redis single flight across connections', { skip }, () => {
  const stores = useRedisStores();

  /** Two migrated stores on one new key space. */
  const openPair = async (): Promise<Store[]> => {
    const name = createStoreName();
    const pair = [await stores.open({ name }), await stores.open({ name })];
    await Promise.all(pair.map((store) => store.migrate()));
    return pair;
  };

  it('exactly one caller per key builds a cache entry, takes a lock and creates a request record', async () => {
    const pair = await openPair();
    const builds = await race(pair, (store, key, caller) => store.cache.acquire({ cache: 'c', key, owner: caller, token: caller, leaseMs: 30_000 }));
    const locks = await race(pair, (store, key, caller) => store.locks.acquire({ key, owner: caller, token: caller, ttlMs: 30_000 }));
    const requests = await race(pair, (store, key, caller) => store.requests.remember({ scope: 's', key, requestHash: caller, value: caller }));
    const fences = new Set<number>();
    for (const key of KEYS) {
      const built = builds.get(key) ?? [];
      assert.deepEqual(built.map((r) => r.state).sort(), ['build', ...Array<string>(2 * CALLERS - 1).fill('building')], key);
      const builder = built.find((r) => r.state === 'build')?.entry;
      assert.ok(built.every((r) => r.entry.builderToken === builder?.builderToken), `${key}: everyone sees the one builder`);

      const taken = locks.get(key) ?? [];
      const holders = taken.flatMap((r) => (r.status === 'acquired' ? [r.lock] : []));
      assert.equal(holders.length, 1, `${key}: one lock holder`);
      assert.ok(taken.every((r) => r.status === 'acquired' || r.holder.owner === holders[0]?.owner), `${key}: the others are told who`);

      const remembered = requests.get(key) ?? [];
      assert.equal(remembered.filter((r) => r.created).length, 1, `${key}: one record created`);
      assert.equal(new Set(remembered.map((r) => r.record.requestHash)).size, 1, `${key}: everyone gets that record`);

      fences.add(builder?.builderFence ?? -1);
      fences.add(holders[0]?.fence ?? -1);
    }
    assert.equal(fences.size, 2 * KEYS.length, 'builders and lock holders take fences from one sequence, none twice');
  });

  it('versions handed out by two connections at once are 1..n per key, each once', async () => {
    const pair = await openPair();
    const allocated = await race(pair, (store, key) => store.versions.allocate('assets', key));
    for (const key of KEYS) {
      assert.deepEqual([...(allocated.get(key) ?? [])].sort((a, b) => a - b), Array.from({ length: 2 * CALLERS }, (_, i) => i + 1), key);
    }
  });
});
