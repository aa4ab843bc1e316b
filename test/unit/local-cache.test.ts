/**
 * The per-process LRU in front of the single-flight cache (`CacheKeyOptions.local`), on a memory
 * store and a fake clock: read-through and write-through, never a failure or a stale value, a copy
 * never outlives the shared entry's expiry (so a rebuilt shared entry is what the next lookup
 * gets), the least recently used copy goes first, and its own hit metric.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFakeClock } from '../../src/core/clock.ts';
import { StageFailure } from '../../src/core/errors.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import { createSingleFlightCache } from '../../src/engine/single-flight-cache.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { createRecorder } from '../support/engine-harness.ts';

async function setup() {
  const clock = createFakeClock();
  const ids = createIdGenerator(clock);
  const store = createMemoryStore({ clock, ids });
  await store.migrate();
  /** One "process": its own facade (and so its own LRUs) over the shared store. */
  const process = (owner: string) => {
    const { observer, recorded } = createRecorder();
    return { cache: createSingleFlightCache({ store, clock, ids, observer, random: () => 0, owner }), recorded };
  };
  return { clock, process };
}

const local = { name: 'fast' };
const options = (key: string, extra: object = {}) => ({ cache: 'c', key, ttlMs: 1_000, local, ...extra });
const mustNotBuild = (): Promise<never> => Promise.reject(new Error('must not build'));

describe('local cache in front of the single-flight cache', () => {
  it('answers a repeat from this process without asking the store, and counts its own hits and misses', async () => {
    const { process } = await setup();
    const { cache, recorded } = process('a');
    assert.deepEqual(await cache.getOrBuild(options('k'), async () => 'v1'), { value: 'v1', result: 'miss' });
    assert.deepEqual(await cache.getOrBuild(options('k'), mustNotBuild), { value: 'v1', result: 'hit' });
    assert.deepEqual(recorded.cacheRequests, ['c:miss'], 'the second lookup never reached the shared cache');
    assert.deepEqual(recorded.localCacheRequests, ['fast:miss', 'fast:hit']);
  });

  it('keeps what another process built once it was read through the shared cache', async () => {
    const { process } = await setup();
    const a = process('a');
    const b = process('b');
    await a.cache.getOrBuild(options('k'), async () => 'built by a');
    assert.equal((await b.cache.getOrBuild(options('k'), mustNotBuild)).value, 'built by a');
    assert.equal((await b.cache.getOrBuild(options('k'), mustNotBuild)).value, 'built by a');
    assert.deepEqual(b.recorded.cacheRequests, ['c:hit']);
    assert.deepEqual(b.recorded.localCacheRequests, ['fast:miss', 'fast:hit']);
  });

  it('never keeps a failure: the next lookup asks the shared cache again', async () => {
    const { process } = await setup();
    const { cache, recorded } = process('a');
    const failing = () => Promise.reject(StageFailure.permanent('bad input'));
    await assert.rejects(cache.getOrBuild(options('k'), failing), /bad input/);
    await assert.rejects(cache.getOrBuild(options('k'), mustNotBuild), /bad input/);
    assert.deepEqual(recorded.cacheRequests, ['c:miss', 'c:negative']);
    assert.deepEqual(recorded.localCacheRequests, ['fast:miss', 'fast:miss']);
  });

  it('drops a copy at the shared expiry, so a rebuilt shared entry is what this process gets next', async () => {
    const { clock, process } = await setup();
    const a = process('a');
    const b = process('b');
    await a.cache.getOrBuild(options('k'), async () => 'v1');
    await clock.advance(1_001);
    // Another process rebuilds the expired entry: the shared entry changed.
    assert.equal((await b.cache.getOrBuild(options('k'), async () => 'v2')).value, 'v2');
    assert.deepEqual(await a.cache.getOrBuild(options('k'), mustNotBuild), { value: 'v2', result: 'hit' });
    assert.deepEqual(a.recorded.localCacheRequests, ['fast:miss', 'fast:miss']);
    assert.deepEqual(await a.cache.getOrBuild(options('k'), mustNotBuild), { value: 'v2', result: 'hit' });
    assert.deepEqual(a.recorded.localCacheRequests.at(-1), 'fast:hit');
  });

  it('never keeps a stale value served while another caller revalidates', async () => {
    const { clock, process } = await setup();
    const a = process('a');
    await a.cache.getOrBuild(options('k', { staleMs: 10_000 }), async () => 'old');
    await clock.advance(1_001);
    let revalidated = false;
    const stale = await a.cache.getOrBuild(options('k', { staleMs: 10_000 }), async () => {
      revalidated = true;
      return 'new';
    });
    assert.deepEqual(stale, { value: 'old', result: 'stale' });
    await clock.advance(0);
    assert.ok(revalidated);
    // The stale value was not copied: this lookup reads the revalidated shared entry.
    assert.deepEqual(await a.cache.getOrBuild(options('k', { staleMs: 10_000 }), mustNotBuild), { value: 'new', result: 'hit' });
    assert.deepEqual(a.recorded.localCacheRequests, ['fast:miss', 'fast:miss', 'fast:miss']);
  });

  it('holds at most maxEntries copies, dropping the least recently used first', async () => {
    const { process } = await setup();
    const { cache, recorded } = process('a');
    const small = { name: 'small', maxEntries: 2 };
    for (const key of ['k1', 'k2']) await cache.getOrBuild(options(key, { local: small }), async () => key);
    await cache.getOrBuild(options('k1', { local: small }), mustNotBuild); // k1 is now the most recent
    await cache.getOrBuild(options('k3', { local: small }), async () => 'k3'); // evicts k2
    recorded.localCacheRequests.length = 0;
    for (const key of ['k1', 'k3', 'k2']) await cache.getOrBuild(options(key, { local: small }), async () => key);
    assert.deepEqual(recorded.localCacheRequests, ['small:hit', 'small:hit', 'small:miss']);
  });
});
