/**
 * Stage locks in the engine, on the memory store with a fake clock: the key rendered from the
 * run, the lock taken before the handler and released after the commit, jobs that wait for a
 * held lock without spending attempts and never run beside the holder, the lock renewed with the
 * heartbeat and a lost lock aborting the handler, publications fenced by the lock, the default
 * TTL, start-up checks, and the reaper.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/core/errors.ts';
import { definePipeline, type StageContext, type StageHandler } from '../../src/core/pipeline/define-pipeline.ts';
import type { LockPolicy, StagePolicyOverrides } from '../../src/core/policy/stage-policy.ts';
import { createEngineHarness, deferred, type EngineHarness } from '../support/engine-harness.ts';

const KEY = 'render:{{input.assetId}}';

/** A one-stage pipeline `name` whose stage `a` takes `lock`. */
function lockedPipeline(name: string, handler: StageHandler, lock: LockPolicy = { key: KEY, ttlMs: 2_000 }, policy: StagePolicyOverrides = {}) {
  return definePipeline({
    name,
    version: 1,
    stages: [{ name: 'a', handler, policy: { leaseMs: 2_000, heartbeatMs: 500, concurrency: 2, backoff: { baseMs: 100, capMs: 1_000 }, ...policy, lock } }],
  });
}

/** Advances the fake clock in 50 ms steps, letting the worker claim, wait and commit. */
async function advance(h: EngineHarness, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 50) await h.clock.advance(50);
}

describe('stage locks in the engine', () => {
  it('renders the key, hands the stage its fence, fences its publication by the lock and releases it after the commit', async () => {
    let seen: StageContext['lock'] = null;
    const h = await createEngineHarness([
      lockedPipeline('t.lock', (ctx) => {
        seen = ctx.lock;
        ctx.publish({ subjectId: 'asset_42', profile: 'preview', artifactRef: `sha256:${'a'.repeat(64)}`, subjectVersion: 1 });
        return 'done';
      }),
    ]);
    const { run } = await h.kiln.submit('t.lock', { assetId: 'asset_42' });
    const worker = h.kiln.createWorker();
    assert.equal(await worker.runOnce(), 1);
    assert.equal((await h.kiln.getRun(run.id)).run.status, 'succeeded');
    const lock = seen as StageContext['lock'];
    assert.equal(lock?.key, 'render:asset_42');
    assert.equal((await h.kiln.getPublication('asset_42', 'preview'))?.fence, lock?.fence, 'published with the lock fence');
    assert.equal(await h.store.locks.get('render:asset_42'), null, 'released after the commit');
    assert.deepEqual(h.recorded.lockAcquiredWaitMs, [0]);
  });

  it('a key may name run fields and earlier stages\' outputs', async () => {
    const keys: (string | undefined)[] = [];
    const p = definePipeline({
      name: 't.refs',
      version: 1,
      stages: [
        { name: 'fetch', handler: () => ({ id: 7 }) },
        { name: 'render', handler: (ctx) => keys.push(ctx.lock?.key), policy: { lock: { key: '{{run.pipeline}}/{{stage.fetch.outputs.id}}/{{run.subjectId}}' } } },
      ],
    });
    const h = await createEngineHarness([p]);
    await h.kiln.submit('t.refs', {}, { subjectId: 'asset_9', subjectVersion: 1 });
    const worker = h.kiln.createWorker();
    await worker.runOnce();
    await worker.runOnce();
    assert.deepEqual(keys, ['t.refs/7/asset_9']);
  });

  it('a job whose lock is held waits without spending attempts and never runs beside the holder; it runs once the lock is free', async () => {
    const gates = [deferred<string>(), deferred<string>()];
    const fences: number[] = [];
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    const h = await createEngineHarness([
      lockedPipeline('t.wait', async (ctx) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        fences.push(ctx.lock?.fence ?? -1);
        try {
          return await (gates[calls++] as ReturnType<typeof deferred<string>>).promise;
        } finally {
          running -= 1;
        }
      }),
    ]);
    const first = await h.kiln.submit('t.wait', { assetId: 'x' });
    const second = await h.kiln.submit('t.wait', { assetId: 'x' });
    const worker = h.kiln.createWorker({ pollMs: 50 });
    worker.start();
    await advance(h, 1_000);
    assert.equal(calls, 1, 'only the holder runs');
    assert.ok(h.recorded.lockWaits.length >= 2, `waited ${h.recorded.lockWaits.length} times`);
    const waiting = (await h.kiln.listJobs({ runId: second.run.id }))[0];
    assert.equal(waiting?.attempt, 0, 'waiting spends no attempt');
    assert.notEqual(waiting?.lockWaitSince, null);
    gates[0]?.resolve('first');
    await advance(h, 2_000);
    assert.equal(calls, 2);
    gates[1]?.resolve('second');
    await advance(h, 200);
    for (const r of [first, second]) assert.equal((await h.kiln.getRun(r.run.id)).run.status, 'succeeded');
    assert.equal(maxRunning, 1);
    assert.ok((fences[1] ?? 0) > (fences[0] ?? Infinity), 'the next holder has a higher fence');
    assert.equal((await h.kiln.getRun(second.run.id)).stages[0]?.attempts, 1, 'the waits were not counted');
    const waits = h.recorded.lockAcquiredWaitMs;
    assert.equal(waits[0], 0);
    assert.ok((waits[1] ?? 0) >= 1_000, `the second waited ${waits[1]} ms`);
    await worker.stop(0);
  });

  it('jobs with different keys run side by side', async () => {
    const gate = deferred<string>();
    let running = 0;
    let maxRunning = 0;
    const h = await createEngineHarness([
      lockedPipeline('t.keys', async () => {
        maxRunning = Math.max(maxRunning, ++running);
        await gate.promise;
        running -= 1;
        return 'ok';
      }),
    ]);
    await h.kiln.submit('t.keys', { assetId: 'a' });
    await h.kiln.submit('t.keys', { assetId: 'b' });
    const worker = h.kiln.createWorker({ pollMs: 50 });
    worker.start();
    await advance(h, 200);
    assert.equal(maxRunning, 2);
    assert.deepEqual(h.recorded.lockWaits, []);
    gate.resolve('ok');
    await advance(h, 200);
    await worker.stop(0);
  });

  it('the heartbeat renews the lock past its TTL; another owner is refused meanwhile', async () => {
    const done = deferred<string>();
    const h = await createEngineHarness([lockedPipeline('t.renew', () => done.promise, { key: KEY, ttlMs: 1_000 })]);
    const { run } = await h.kiln.submit('t.renew', { assetId: 'x' });
    const worker = h.kiln.createWorker({ pollMs: 50 });
    worker.start();
    await advance(h, 5_000);
    const intruder = await h.store.locks.acquire({ key: 'render:x', owner: 'intruder', token: 'intruder', ttlMs: 1_000 });
    assert.equal(intruder.status, 'held', 'five TTLs later the lock is still the stage’s');
    done.resolve('done');
    await advance(h, 200);
    assert.equal((await h.kiln.getRun(run.id)).run.status, 'succeeded');
    await worker.stop(0);
  });

  it('a lost lock aborts the handler; the attempt fails as LOCK_LOST and the retry waits for the new holder', async () => {
    let calls = 0;
    let abortCode: unknown;
    const h = await createEngineHarness([
      lockedPipeline('t.lost', (ctx) => {
        if (++calls > 1) return 'second';
        return new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => {
            abortCode = (ctx.signal.reason as { code?: string }).code;
            reject(ctx.signal.reason as Error);
          }),
        );
      }),
    ]);
    const { run } = await h.kiln.submit('t.lost', { assetId: 'x' });
    const worker = h.kiln.createWorker({ pollMs: 50 });
    worker.start();
    await advance(h, 100);
    const job = (await h.kiln.listJobs({ runId: run.id }))[0];
    // An operator (or a stalled renewal) lets the lock go, and someone else takes it.
    assert.equal(await h.store.locks.release('render:x', job?.leaseToken ?? ''), 'released');
    assert.equal((await h.store.locks.acquire({ key: 'render:x', owner: 'intruder', token: 'intruder', ttlMs: 60_000 })).status, 'acquired');
    await advance(h, 600);
    assert.equal(abortCode, 'LOCK_LOST');
    const failed = (await h.kiln.getRun(run.id)).stages[0];
    assert.deepEqual([failed?.error?.code, failed?.error?.class, failed?.attempts], ['LOCK_LOST', 'transient', 1]);
    await advance(h, 2_000);
    assert.equal(calls, 1, 'the retry waits while the intruder holds the lock');
    assert.ok(h.recorded.lockWaits.length > 0);
    await h.store.locks.release('render:x', 'intruder');
    await advance(h, 2_000);
    const detail = await h.kiln.getRun(run.id);
    assert.deepEqual([detail.run.status, detail.stages[0]?.attempts, detail.stages[0]?.output], ['succeeded', 2, 'second']);
    await worker.stop(0);
  });

  it('a failing handler releases its lock and its retry takes it again', async () => {
    let calls = 0;
    const h = await createEngineHarness([
      lockedPipeline('t.fail', () => {
        if (++calls === 1) throw new Error('flaky');
        return 'ok';
      }),
    ]);
    const { run } = await h.kiln.submit('t.fail', { assetId: 'x' });
    const worker = h.kiln.createWorker();
    await worker.runOnce();
    assert.equal(await h.store.locks.get('render:x'), null);
    await h.clock.advance(1_000);
    await worker.runOnce();
    assert.equal((await h.kiln.getRun(run.id)).run.status, 'succeeded');
  });

  it('a handler that stops at its timeout frees the lock at once; one that ignores it keeps the lock until its TTL', async () => {
    const h = await createEngineHarness([
      lockedPipeline(
        't.timeout',
        (ctx) =>
          new Promise((_, reject) => {
            // `stubborn` inputs ignore their abort (abandoned); the others stop when told.
            if (!(ctx.input as { stubborn?: boolean }).stubborn) ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error));
          }),
        { key: KEY, ttlMs: 20_000 },
        { timeoutMs: 1_000, maxAttempts: 1 },
      ),
    ]);
    await h.kiln.submit('t.timeout', { assetId: 'polite' });
    await h.kiln.submit('t.timeout', { assetId: 'stubborn', stubborn: true });
    const worker = h.kiln.createWorker({ pollMs: 50 });
    worker.start();
    await advance(h, 3_000);
    assert.equal(await h.store.locks.get('render:polite'), null, 'released right after the failed attempt committed');
    assert.equal((await h.store.locks.get('render:stubborn'))?.owner, worker.id, 'kept while the abandoned handler may still run');
    await advance(h, 20_000);
    assert.equal(await h.store.locks.get('render:stubborn'), null, 'expired after its TTL, then reaped');
    assert.equal(h.recorded.staleLocksReaped, 1);
    await worker.stop(0);
  });

  it('a key the run cannot fill fails the run permanently with LOCK_KEY_UNRESOLVED, running nothing', async () => {
    let calls = 0;
    const h = await createEngineHarness([lockedPipeline('t.key', () => ++calls)]);
    const { run } = await h.kiln.submit('t.key', { other: 1 });
    await h.kiln.createWorker().runOnce();
    const detail = await h.kiln.getRun(run.id);
    assert.equal(detail.run.status, 'failed');
    assert.equal(detail.run.error?.code, 'LOCK_KEY_UNRESOLVED');
    assert.match(detail.run.error?.message ?? '', /input\.assetId/);
    assert.equal(calls, 0);
    assert.deepEqual(await h.store.locks.list(), []);
  });

  it('the default TTL applies to locks that set none; policies are checked at start', async () => {
    const locks: { expiresAt: number; acquiredAt: number }[] = [];
    const h: EngineHarness = await createEngineHarness(
      [lockedPipeline('t.ttl', async () => locks.push(...(await h.store.locks.list())), { key: KEY })],
      undefined,
      { lockTtlMs: 7_000 },
    );
    await h.kiln.submit('t.ttl', { assetId: 'x' });
    await h.kiln.createWorker().runOnce();
    assert.deepEqual(locks.map((l) => l.expiresAt - l.acquiredAt), [7_000]);

    const bad = (lock: LockPolicy, lockTtlMs?: number) =>
      createEngineHarness([lockedPipeline('t.bad', () => 1, lock)], undefined, lockTtlMs === undefined ? {} : { lockTtlMs });
    await assert.rejects(bad({ key: KEY, ttlMs: 500 }), (err: unknown) => err instanceof ConfigError && /lock\.ttlMs: must be above heartbeatMs/.test(err.message));
    await assert.rejects(bad({ key: 'render:{{assetId}}' }), (err: unknown) => err instanceof ConfigError && /lock\.key: .*must start with one of: input/.test(err.message));
    await assert.rejects(bad({ key: 'render:{{input.a' }), (err: unknown) => err instanceof ConfigError && /unbalanced braces/.test(err.message));
    await assert.rejects(bad({ key: KEY }, 400), (err: unknown) => err instanceof ConfigError && /default lock TTL/.test(err.message));
    await assert.rejects(bad({ key: ' ' }), (err: unknown) => err instanceof ConfigError && /lock\.key: is required/.test(err.message));
  });

  it('the reaper removes stale locks and counts them', async () => {
    const h = await createEngineHarness([lockedPipeline('t.reap', () => 1)]);
    await h.store.locks.acquire({ key: 'crashed', owner: 'gone', token: 'gone', ttlMs: 1_000 });
    const worker = h.kiln.createWorker({ pollMs: 100, reapMs: 500 });
    worker.start();
    await advance(h, 600);
    assert.equal(h.recorded.staleLocksReaped, 0, 'not before it expires');
    await advance(h, 600);
    assert.equal(h.recorded.staleLocksReaped, 1);
    assert.equal(await h.store.locks.get('crashed'), null);
    await worker.stop(0);
  });
});
