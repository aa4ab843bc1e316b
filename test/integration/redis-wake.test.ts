/**
 * Wake-ups across processes on Redis: a completion's script publishes the next stage's queue
 * itself (publish_wake in lib-keys.lua), so another store instance on the same name hears it,
 * while the committing instance's own listeners hear it once (locally, not again by pub/sub).
 * Events only: no timing is asserted, the test waits for the hint to arrive.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/core/ports/store.ts';
import { claim, leaseOf, runRequest, stageJob, submit } from '../conformance/fixture.ts';
import { canRestartRedis, createStoreName, redisSkipReason, startStoppedRedis, stopRedisForOutage } from '../support/redis-server.ts';
import { useRedisStores } from '../support/redis-stores.ts';

/** Resolves with the first wake of `queue` on `store`; every queue heard goes into `heard`. */
function wakeOf(store: { onWake(listener: (queue: string) => void): () => void }, queue: string, heard: string[]): Promise<void> {
  return new Promise((resolve) => {
    store.onWake((woken) => {
      heard.push(woken);
      if (woken === queue) resolve();
    });
  });
}

/**
 * Resolves once `to` hears a wake published by `from`: `from` submits a run of pipeline `ping`
 * every 20 ms until then (a subscriber is connected, or back, once such a wake reaches it).
 * Submissions that fail while the server is away are ignored.
 */
async function heardAcross(from: Store, to: Store): Promise<void> {
  const heard = wakeOf(to, 'ping.a', []);
  const submit = () => from.jobs.submit([{ ...runRequest(), pipeline: 'ping', firstJob: stageJob('a', { pipeline: 'ping' }), stages: ['a'] }]);
  const ping = setInterval(() => void submit().catch(() => undefined), 20);
  await heard.finally(() => clearInterval(ping));
}

describe('Redis wake-ups published by the commit script', { skip: redisSkipReason() }, () => {
  const redis = useRedisStores();

  it('reach another instance on the same store, and the committing one once', { timeout: 20_000 }, async () => {
    const name = createStoreName();
    const a = await redis.open({ name });
    const b = await redis.open({ name });
    await a.migrate();
    await b.migrate();
    await submit(a);
    const [claimed] = await claim(a, { queue: 'demo.a', workerId: 'w', limit: 1, leaseMs: 30_000 });
    assert.ok(claimed);
    const heardA: string[] = [];
    const heardB: string[] = [];
    const onA = wakeOf(a, 'demo.b', heardA);
    const onB = wakeOf(b, 'demo.b', heardB);
    await heardAcross(a, b);
    const [result] = await a.jobs.commit([{ type: 'complete', lease: leaseOf(claimed), output: { ok: true }, durationMs: 1, next: stageJob('b') }]);
    assert.equal(result?.outcome, 'committed');
    await Promise.all([onA, onB]);
    // A round trip through the server after the publish: any echo to `a` would have arrived.
    await a.jobs.claim([{ queue: 'demo.none', workerId: 'w', limit: 1, leaseMs: 30_000 }]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(heardA.filter((q) => q === 'demo.b').length, 1, 'the committing instance hears its own wake once');
    assert.ok(heardB.includes('demo.b'));
  });

  it('reach another instance again after redis-server stopped and came back (its subscriber subscribes anew)', { timeout: 30_000 }, async (t) => {
    if (!canRestartRedis()) return t.skip('KILN_REDIS_URL names a server this process cannot stop');
    const name = createStoreName();
    const a = await redis.open({ name });
    const b = await redis.open({ name });
    await a.migrate();
    await heardAcross(a, b);
    await stopRedisForOutage();
    await startStoppedRedis();
    await heardAcross(a, b);
  });
});
