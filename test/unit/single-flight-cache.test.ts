/**
 * The engine's single-flight cache facade over a real (memory) store on the real clock: one
 * build per key however many callers race, waiters get the builder's value, negative entries,
 * transient failures, stale-while-revalidate and takeover after a builder dies.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { systemClock } from '../../src/core/clock.ts';
import { StageFailure } from '../../src/core/errors.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createSingleFlightCache } from '../../src/engine/single-flight-cache.ts';
import { createRecorder, deferred } from '../support/engine-harness.ts';

async function setup(owner = 'test') {
  const ids = createIdGenerator(systemClock);
  const store = createMemoryStore({ clock: systemClock, ids });
  await store.migrate();
  const { observer, recorded } = createRecorder();
  const cache = createSingleFlightCache({ store, clock: systemClock, ids, observer, random: () => 0, owner });
  return { store, cache, recorded, ids, observer };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('single-flight cache', () => {
  it('runs one build for 20 concurrent callers of one key; the others wait for its value', async () => {
    const { cache, recorded } = await setup();
    const gate = deferred();
    let builds = 0;
    const calls = Array.from({ length: 20 }, () =>
      cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, async () => {
        builds++;
        await gate.promise;
        return { n: 42 };
      }),
    );
    await sleep(20);
    gate.resolve();
    const results = await Promise.all(calls);
    assert.equal(builds, 1);
    assert.ok(results.every((r) => (r.value as { n: number }).n === 42));
    assert.equal(results.filter((r) => r.result === 'miss').length, 1);
    assert.equal(results.filter((r) => r.result === 'wait').length, 19);
    assert.deepEqual(recorded.cacheBuilds, ['c']);
    assert.equal(recorded.cacheRequests.filter((r) => r === 'c:wait').length, 19);
  });

  it('serves a fresh value as a hit without building', async () => {
    const { cache, recorded } = await setup();
    await cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, async () => 'v1');
    const again = await cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, () => Promise.reject(new Error('must not build')));
    assert.deepEqual(again, { value: 'v1', result: 'hit' });
    assert.deepEqual(recorded.cacheRequests, ['c:miss', 'c:hit']);
  });

  it('remembers a permanent failure as a negative entry and rethrows it without building', async () => {
    const { cache, recorded } = await setup();
    const failing = () => Promise.reject(StageFailure.permanent('bad input', { code: 'QR_CONTENT_TOO_LONG' }));
    await assert.rejects(cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, failing), { code: 'QR_CONTENT_TOO_LONG' });
    let built = false;
    await assert.rejects(
      cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, async () => ((built = true), 'x')),
      (err: unknown) => err instanceof StageFailure && err.code === 'QR_CONTENT_TOO_LONG' && err.errorClass === 'permanent',
    );
    assert.equal(built, false);
    assert.deepEqual(recorded.cacheRequests, ['c:miss', 'c:negative']);
  });

  it('rebuilds after a negative entry expires', async () => {
    const { cache } = await setup();
    await assert.rejects(cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000, negativeTtlMs: 20 }, () => Promise.reject(StageFailure.permanent('no'))));
    await sleep(40);
    assert.deepEqual(await cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, async () => 'ok'), { value: 'ok', result: 'miss' });
  });

  it('releases the key after a transient failure: the next caller builds', async () => {
    const { cache, store } = await setup();
    await assert.rejects(cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, () => Promise.reject(new Error('disk hiccup'))), /disk hiccup/);
    assert.equal(await store.cache.get('c', 'k'), null);
    assert.deepEqual(await cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, async () => 'ok'), { value: 'ok', result: 'miss' });
  });

  it('serves the stale value while exactly one caller revalidates it', async () => {
    const { cache, store } = await setup();
    await cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 20, staleMs: 60_000 }, async () => 'old');
    await sleep(40);
    const gate = deferred();
    let builds = 0;
    const rebuild = async (): Promise<string> => {
      builds++;
      await gate.promise;
      return 'new';
    };
    const stale = await Promise.all(Array.from({ length: 5 }, () => cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000, staleMs: 60_000 }, rebuild)));
    assert.ok(stale.every((r) => r.value === 'old' && r.result === 'stale'));
    gate.resolve();
    for (let i = 0; i < 50 && (await store.cache.get('c', 'k'))?.value !== 'new'; i++) await sleep(5);
    assert.equal(builds, 1);
    assert.deepEqual(await cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, rebuild), { value: 'new', result: 'hit' });
  });

  it('takes a build over when its builder died without finishing (its lease expired)', async () => {
    const { cache, store } = await setup();
    await takeAndAbandon(store, 'k', 30);
    const started = Date.now();
    const result = await cache.getOrBuild({ cache: 'c', key: 'k', ttlMs: 60_000 }, async () => 'rebuilt');
    assert.equal(result.value, 'rebuilt');
    assert.ok(Date.now() - started >= 20, 'it waited for the dead builder lease to expire');
  });
});

/** A builder that takes the lease and never finishes (as if its process was killed). */
async function takeAndAbandon(store: Store, key: string, leaseMs: number): Promise<void> {
  const taken = await store.cache.acquire({ cache: 'c', key, owner: 'dead', token: 'dead-token', leaseMs });
  assert.equal(taken.state, 'build');
}
