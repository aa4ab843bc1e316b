import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoreUnavailableError, StageFailure, ValidationError } from '../../src/core/errors.ts';
import { definePipeline, type StageHandler } from '../../src/core/pipeline/define-pipeline.ts';
import { createEngineHarness, deferred, type EngineHarness } from '../support/engine-harness.ts';

/** A three-stage pipeline whose handlers the test supplies. */
function threeStages(name: string, handlers: Partial<Record<'a' | 'b' | 'c', StageHandler>> = {}, rollbacks: Partial<Record<'a' | 'b' | 'c', StageHandler>> = {}) {
  const stage = (n: 'a' | 'b' | 'c') => ({
    name: n,
    handler: handlers[n] ?? ((ctx) => ({ stage: n, input: ctx.input })),
    ...(rollbacks[n] ? { rollback: rollbacks[n] } : {}),
  });
  return definePipeline({ name, version: 1, defaults: { backoff: { baseMs: 100, capMs: 1_000 } }, stages: [stage('a'), stage('b'), stage('c')] });
}

/** Starts a worker whose every claim takes 20 ms of the harness clock; records when each claim began. */
function startWithSlowClaims(h: EngineHarness): { claimedAt: number[]; t0: number; stop: () => Promise<void> } {
  const claimedAt: number[] = [];
  const claimJobs = h.store.jobs.claim.bind(h.store.jobs);
  h.store.jobs.claim = (requests) => (claimedAt.push(h.clock.now()), h.clock.set(h.clock.now() + 20), claimJobs(requests));
  const worker = h.kiln.createWorker({ pollMs: 100 });
  const t0 = h.clock.now();
  worker.start();
  const stop = async (): Promise<void> => {
    const stopped = worker.stop(0);
    await h.clock.advance(200);
    await stopped;
  };
  return { claimedAt, t0, stop };
}

describe('engine worker on the memory store', () => {
  it('runs every stage once in order and ends the run succeeded with outputs passed along', async () => {
    const seen: string[] = [];
    const p = threeStages('t.ok', {
      a: () => (seen.push('a'), 1),
      b: (ctx) => (seen.push('b'), (ctx.outputs.a as number) + 1),
      c: (ctx) => (seen.push('c'), (ctx.outputs.b as number) + 1),
    });
    const h = await createEngineHarness([p]);
    const { run } = await h.kiln.submit('t.ok', { n: 1 });
    const worker = h.kiln.createWorker();
    assert.equal(await worker.runOnce(), 1);
    assert.equal(await worker.runOnce(), 1);
    assert.equal(await worker.runOnce(), 1);
    assert.equal(await worker.runOnce(), 0);
    const detail = await h.kiln.getRun(run.id);
    assert.equal(detail.run.status, 'succeeded');
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.deepEqual(detail.stages.map((s) => s.output), [1, 2, 3]);
    assert.equal((await h.kiln.ledger(run.id)).length, 3);
    assert.deepEqual(h.recorded.runStatuses.map((r) => r.status), ['queued', 'succeeded']);
    assert.equal(h.recorded.executions.filter((e) => e.outcome === 'succeeded').length, 3);
  });

  it('retries a retryable failure after its backoff, dead-letters when attempts run out, and succeeds when replayed', async () => {
    let calls = 0;
    let down = true;
    const p = threeStages('t.retry', {
      b: () => {
        calls++;
        if (down) throw new Error('flaky');
        return 'b';
      },
    });
    const h = await createEngineHarness([p], { 't.retry': { b: { maxAttempts: 3 } } });
    const { run } = await h.kiln.submit('t.retry', {});
    const worker = h.kiln.createWorker();
    await worker.runOnce(); // a
    await worker.runOnce(); // b attempt 1 fails
    assert.equal(await worker.runOnce(), 0, 'not claimable before its backoff');
    await h.clock.advance(1_000);
    await worker.runOnce(); // attempt 2
    await h.clock.advance(1_000);
    await worker.runOnce(); // attempt 3 -> dead-letter
    const detail = await h.kiln.getRun(run.id);
    assert.equal(calls, 3);
    assert.equal(detail.run.status, 'dead_lettered');
    assert.equal(detail.stages[1]?.status, 'dead_lettered');
    assert.equal(detail.stages[1]?.attempts, 3);
    assert.equal(detail.run.error?.code, 'STAGE_FAILED');
    const outcomes = h.recorded.executions.filter((e) => e.stage === 'b').map((e) => e.outcome);
    assert.deepEqual(outcomes, ['retried', 'retried', 'dead_lettered']);

    down = false;
    const [dead] = await h.kiln.listJobs({ runId: run.id, state: 'dead' });
    await h.kiln.replayJob(dead?.id ?? '');
    await worker.runOnce(); // b, replayed
    await worker.runOnce(); // c
    const replayed = await h.kiln.getRun(run.id);
    assert.equal(replayed.run.status, 'succeeded');
    assert.equal(replayed.run.error, null);
    assert.equal(calls, 4);
  });

  it('fails the run at once on a permanent failure, without retrying, and refuses to replay it', async () => {
    let calls = 0;
    const p = threeStages('t.perm', { a: () => { calls++; throw StageFailure.permanent('bad input', { code: 'BAD' }); } });
    const h = await createEngineHarness([p]);
    const { run } = await h.kiln.submit('t.perm', {});
    const worker = h.kiln.createWorker();
    await worker.runOnce();
    await h.clock.advance(120_000);
    assert.equal(await worker.runOnce(), 0);
    const detail = await h.kiln.getRun(run.id);
    const error = { class: 'permanent', code: 'BAD', message: 'bad input' };
    assert.equal(calls, 1);
    assert.equal(detail.run.status, 'failed');
    assert.deepEqual(detail.run.error, error);
    assert.deepEqual([detail.stages[0]?.status, detail.stages[0]?.error], ['failed', error]);
    assert.deepEqual(h.recorded.executions.map((e) => [e.outcome, e.errorClass]), [['failed', 'permanent']]);
    assert.deepEqual(h.recorded.runStatuses.map((r) => r.status), ['queued', 'failed']);
    const [dead] = await h.kiln.listJobs({ runId: run.id, state: 'dead' });
    assert.ok(dead, 'the job is kept for inspection');
    await assert.rejects(() => h.kiln.replayJob(dead.id), { code: 'INVALID_TRANSITION' });
    assert.equal(calls, 1);
  });

  it('stores scalar outputs as a JSON round trip would: -0 as 0, NaN and Infinity as null, strings and booleans as they are', async () => {
    const p = threeStages('t.scalars', { a: () => -0, b: () => Number.NaN, c: () => Number.POSITIVE_INFINITY });
    const h = await createEngineHarness([p]);
    const { run } = await h.kiln.submit('t.scalars', {});
    const worker = h.kiln.createWorker();
    for (let i = 0; i < 3; i++) await worker.runOnce();
    const outputs = (await h.kiln.getRun(run.id)).stages.map((s) => s.output);
    assert.ok(Object.is(outputs[0], 0), `-0 is stored as 0, got ${String(outputs[0])}`);
    assert.deepEqual(outputs.slice(1), [null, null]);
    const words = threeStages('t.words', { a: () => 'done', b: () => false, c: () => '' });
    const w = await createEngineHarness([words]);
    const { run: wordsRun } = await w.kiln.submit('t.words', {});
    const wordsWorker = w.kiln.createWorker();
    for (let i = 0; i < 3; i++) await wordsWorker.runOnce();
    assert.deepEqual((await w.kiln.getRun(wordsRun.id)).stages.map((s) => s.output), ['done', false, '']);
  });

  it('fails the attempt of a handler whose output JSON cannot hold (a cycle), instead of waiting for its timeout', async () => {
    const p = threeStages('t.cycle', {
      a: () => {
        const output: Record<string, unknown> = {};
        output.self = output;
        return output as never;
      },
    });
    const h = await createEngineHarness([p]);
    const { run } = await h.kiln.submit('t.cycle', {});
    await h.kiln.createWorker().runOnce();
    const stage = (await h.kiln.getRun(run.id)).stages[0];
    assert.equal(stage?.status, 'failed');
    assert.match(stage?.error?.message ?? '', /circular/i);
    assert.deepEqual(h.recorded.executions.map((e) => e.outcome === 'succeeded'), [false]);
  });

  it('dead-letters a job whose lease expired on every attempt with a transient LEASE_EXPIRED, replayable', async () => {
    const p = threeStages('t.lease');
    const h = await createEngineHarness([p], { 't.lease': { a: { maxAttempts: 2 } } });
    const { run } = await h.kiln.submit('t.lease', {});
    // Workers that claim and then die: nothing renews their leases.
    for (let i = 0; i < 2; i++) {
      await h.store.jobs.claim([{ queue: 't.lease.a', workerId: `crashed-${i}`, limit: 1, leaseMs: 1_000 }]);
      await h.clock.advance(1_000);
    }
    const worker = h.kiln.createWorker();
    assert.equal(await worker.runOnce(), 1);
    const detail = await h.kiln.getRun(run.id);
    assert.equal(detail.run.status, 'dead_lettered');
    assert.deepEqual(detail.run.error, { class: 'transient', code: 'LEASE_EXPIRED', message: 'lease expired on all 2 attempts' });
    assert.equal(h.recorded.executions.at(-1)?.outcome, 'dead_lettered');
    const [dead] = await h.kiln.listJobs({ runId: run.id, state: 'dead' });
    assert.equal((await h.kiln.replayJob(dead?.id ?? '')).state, 'ready');
  });

  it('parks a run after repeated intervention errors and resumes it in place, keeping completed stages', async () => {
    let broken = true;
    let aCalls = 0;
    const p = threeStages('t.park', {
      a: () => ++aCalls,
      b: () => {
        if (broken) throw StageFailure.intervention('credentials expired');
        return 'fixed';
      },
    });
    const h = await createEngineHarness([p], { 't.park': { b: { interventionAttempts: 2 } } });
    const { run } = await h.kiln.submit('t.park', {});
    const worker = h.kiln.createWorker();
    await worker.runOnce();
    await worker.runOnce();
    await h.clock.advance(1_000);
    await worker.runOnce();
    assert.equal((await h.kiln.getRun(run.id)).run.status, 'parked');
    await h.clock.advance(600_000);
    assert.equal(await worker.runOnce(), 0, 'a parked job is not claimed');
    broken = false;
    await h.kiln.resumeRun(run.id);
    await worker.runOnce();
    await worker.runOnce();
    const detail = await h.kiln.getRun(run.id);
    assert.equal(detail.run.status, 'succeeded');
    assert.equal(aCalls, 1, 'the completed stage did not run again');
    assert.equal(detail.stages[1]?.output, 'fixed');
  });

  it('abandons a handler that ignores its timeout, counts the attempt and keeps serving other jobs', async () => {
    const never = deferred<number>();
    const p = definePipeline({
      name: 't.hang',
      version: 1,
      stages: [{ name: 'a', handler: () => never.promise, policy: { timeoutMs: 5_000, leaseMs: 10_000, heartbeatMs: 2_000 } }],
    });
    const q = threeStages('t.other');
    const h = await createEngineHarness([p, q]);
    const hung = await h.kiln.submit('t.hang', {});
    const worker = h.kiln.createWorker({ pollMs: 100 });
    worker.start();
    await h.clock.advance(100);
    assert.equal((await h.kiln.getRun(hung.run.id)).stages[0]?.status, 'running');
    const other = await h.kiln.submit('t.other', {});
    for (let i = 0; i < 10; i++) await h.clock.advance(100);
    assert.equal((await h.kiln.getRun(other.run.id)).run.status, 'succeeded', 'other work goes on meanwhile');
    await h.clock.advance(5_000);
    const job = (await h.kiln.listJobs({ runId: hung.run.id }))[0];
    assert.equal(h.recorded.abandoned.length, 1);
    assert.equal(job?.lastError?.code, 'STAGE_TIMEOUT');
    assert.ok(job && job.attempt >= 1);
    const stage = (await h.kiln.getRun(hung.run.id)).stages[0];
    assert.ok(stage && stage.attempts >= 1 && stage.error?.code === 'STAGE_TIMEOUT');
    await worker.stop(0);
  });

  it('aborts the handler of a cancelled run and commits nothing for it', async () => {
    const started = deferred();
    let aborted: unknown;
    const p = definePipeline({
      name: 't.cancel',
      version: 1,
      stages: [
        {
          name: 'a',
          policy: { heartbeatMs: 500, leaseMs: 5_000 },
          handler: (ctx) =>
            new Promise((_, reject) => {
              started.resolve();
              ctx.signal.addEventListener('abort', () => ((aborted = ctx.signal.reason), reject(ctx.signal.reason)));
            }),
        },
      ],
    });
    const h = await createEngineHarness([p]);
    const { run } = await h.kiln.submit('t.cancel', {});
    const worker = h.kiln.createWorker({ pollMs: 100 });
    worker.start();
    await h.clock.advance(100);
    await started.promise;
    await h.kiln.cancelRun(run.id, 'user asked');
    await h.clock.advance(1_000);
    assert.equal((aborted as { code?: string }).code, 'CANCELLED');
    assert.equal((await h.kiln.getRun(run.id)).run.status, 'cancelled');
    assert.equal(h.recorded.executions.at(-1)?.outcome, 'cancelled');
    assert.equal((await h.kiln.ledger(run.id)).length, 0);
    await worker.stop(0);
  });

  it('runs rollbacks of completed stages in reverse order when a stage fails permanently, then ends the run failed', async () => {
    const order: string[] = [];
    const p = threeStages(
      't.rollback',
      { c: () => { throw StageFailure.permanent('boom'); } },
      { a: () => (order.push('undo a'), null), b: () => (order.push('undo b'), null) },
    );
    const h = await createEngineHarness([p]);
    const { run } = await h.kiln.submit('t.rollback', {});
    const worker = h.kiln.createWorker();
    for (let i = 0; i < 6; i++) await worker.runOnce();
    const detail = await h.kiln.getRun(run.id);
    assert.deepEqual(order, ['undo b', 'undo a']);
    assert.equal(detail.run.status, 'failed');
    assert.equal(detail.run.error?.message, 'boom');
    assert.equal(detail.stages[2]?.status, 'failed');
    // The run was `running` while compensating: waiters see it end once, `failed`.
    assert.deepEqual(h.recorded.runStatuses.map((r) => r.status), ['queued', 'failed']);
    assert.deepEqual(detail.stages.map((s) => s.rollbackStatus), ['succeeded', 'succeeded', null]);
    const dead = await h.kiln.listJobs({ runId: run.id, state: 'dead' });
    assert.equal(dead.length, 1);
    await assert.rejects(() => h.kiln.replayJob(dead[0]?.id ?? ''), { code: 'RUN_COMPENSATED' });
  });

  it('on stop, lets in-flight jobs finish within the grace period and hands the rest back uncounted', async () => {
    const slow = deferred<string>();
    const p = definePipeline({
      name: 't.stop',
      version: 1,
      stages: [{ name: 'a', handler: () => slow.promise, policy: { concurrency: 2 } }],
    });
    const h = await createEngineHarness([p]);
    const first = await h.kiln.submit('t.stop', { n: 1 });
    const worker = h.kiln.createWorker({ pollMs: 100 });
    worker.start();
    await h.clock.advance(100);
    assert.equal(worker.inFlight(), 1);
    const stopped = worker.stop(1_000);
    await h.clock.advance(1_000);
    await stopped;
    const job = (await h.kiln.listJobs({ runId: first.run.id }))[0];
    assert.equal(job?.state, 'ready', 'handed back');
    assert.equal(job?.attempt, 0, 'the unfinished attempt is not counted');
    slow.resolve('late');
  });

  it('keeps renewing the lease of a handler that runs longer than its lease, so it commits once', async () => {
    const done = deferred<string>();
    const p = definePipeline({
      name: 't.long',
      version: 1,
      stages: [{ name: 'a', policy: { leaseMs: 1_000, heartbeatMs: 300, timeoutMs: 60_000 }, handler: () => done.promise }],
    });
    const h = await createEngineHarness([p]);
    const { run } = await h.kiln.submit('t.long', {});
    const worker = h.kiln.createWorker({ pollMs: 100 });
    worker.start();
    for (let i = 0; i < 100; i++) await h.clock.advance(100); // 10 s, ten leases long
    const job = (await h.kiln.listJobs({ runId: run.id }))[0];
    assert.equal(job?.state, 'leased');
    assert.equal(job?.redeliveries, 0);
    done.resolve('done');
    await h.clock.advance(100);
    const detail = await h.kiln.getRun(run.id);
    assert.equal(detail.run.status, 'succeeded');
    assert.equal(detail.stages[0]?.attempts, 1);
    assert.deepEqual(h.recorded.executions.map((e) => e.outcome), ['succeeded']);
    await worker.stop(0);
  });

  it('takes over the expired lease of a crashed worker and counts one redelivery', async () => {
    const h = await createEngineHarness([threeStages('t.crash')]);
    const { run } = await h.kiln.submit('t.crash', {});
    // A worker that claims and then dies: nothing renews its lease.
    await h.store.jobs.claim([{ queue: 't.crash.a', workerId: 'crashed', limit: 1, leaseMs: 1_000 }]);
    const worker = h.kiln.createWorker();
    assert.equal(await worker.runOnce(), 0, 'not claimable while the lease holds');
    await h.clock.advance(1_000);
    assert.equal(await worker.runOnce(), 1);
    assert.deepEqual(h.recorded.redeliveries, { 't.crash.a': 1 });
    const detail = await h.kiln.getRun(run.id);
    assert.equal(detail.stages[0]?.status, 'succeeded');
    assert.equal(detail.stages[0]?.attempts, 2);
  });

  it('retries a commit while the store is unavailable, so finished work is not run again', async () => {
    let calls = 0;
    const h = await createEngineHarness([threeStages('t.outage', { a: () => ++calls })]);
    const commit = h.store.jobs.commit.bind(h.store);
    let outages = 2;
    h.store.jobs.commit = (items) => (outages-- > 0 ? Promise.reject(new StoreUnavailableError('store restarting')) : commit(items));
    const { run } = await h.kiln.submit('t.outage', {});
    const worker = h.kiln.createWorker({ pollMs: 100 });
    worker.start();
    for (let i = 0; i < 20; i++) await h.clock.advance(100);
    const detail = await h.kiln.getRun(run.id);
    assert.equal(detail.run.status, 'succeeded');
    assert.equal(calls, 1, 'the handler ran once');
    assert.equal(detail.stages[0]?.attempts, 1);
    await worker.stop(0);
  });

  it('claims up to concurrency + prefetch, starts waiting jobs without a claim, and hands them back on stop', async () => {
    const gates = [deferred<number>(), deferred<number>(), deferred<number>(), deferred<number>()];
    let started = 0;
    const p = definePipeline({
      name: 't.prefetch',
      version: 1,
      stages: [{ name: 'a', policy: { concurrency: 1, prefetch: 3 }, handler: () => gates[started++]?.promise ?? 0 }],
    });
    const h = await createEngineHarness([p]);
    for (let i = 0; i < 4; i++) await h.kiln.submit('t.prefetch', { i });
    let claims = 0;
    const claimJobs = h.store.jobs.claim.bind(h.store.jobs);
    h.store.jobs.claim = (requests) => (claims++, claimJobs(requests));
    const worker = h.kiln.createWorker({ pollMs: 100 });
    worker.start();
    await h.clock.advance(10);
    assert.equal(claims, 1);
    assert.equal((await h.kiln.listJobs({ state: 'leased' })).length, 4, 'one running, three held ahead');
    assert.equal(started, 1, 'concurrency 1: one handler at a time');
    gates[0]?.resolve(0);
    await h.clock.advance(10);
    assert.equal(started, 2, 'the next job started from the local queue');
    assert.equal(claims, 1, 'without another claim');
    const stopped = worker.stop(0);
    await h.clock.advance(10);
    await stopped;
    const ready = await h.kiln.listJobs({ state: 'ready' });
    assert.equal(ready.length, 3, 'the running job and the two waiting ones are handed back');
    assert.ok(ready.every((j) => j.attempt === 0), 'their claims are not counted');
    gates.forEach((g) => g.resolve(0));
  });

  it('after a claim that found fewer jobs than it had room for, waits as long as that claim took before claiming again', async () => {
    const p = definePipeline({ name: 't.gap', version: 1, stages: [{ name: 'a', policy: { concurrency: 10 }, handler: () => 0 }] });
    const h = await createEngineHarness([p]);
    await h.kiln.submit('t.gap', { i: 0 });
    const { claimedAt, t0, stop } = startWithSlowClaims(h);
    await h.clock.advance(1);
    assert.deepEqual(claimedAt, [t0], 'one claim: 1 job of the 10 it asked for');
    await h.kiln.submit('t.gap', { i: 1 });
    await h.clock.advance(18);
    assert.equal(claimedAt.length, 1, 'the new job waits while the claim that took 20 ms is waited out');
    await h.clock.advance(2);
    assert.deepEqual(claimedAt, [t0, t0 + 40], 'claimed 20 ms after the first claim ended');
    await stop();
  });

  it('claims again at once after a claim that filled every free slot', async () => {
    const p = definePipeline({ name: 't.full', version: 1, stages: [{ name: 'a', policy: { concurrency: 1 }, handler: () => 0 }] });
    const h = await createEngineHarness([p]);
    for (let i = 0; i < 3; i++) await h.kiln.submit('t.full', { i });
    const { claimedAt, t0, stop } = startWithSlowClaims(h);
    await h.clock.advance(1);
    assert.deepEqual(claimedAt.slice(0, 3), [t0, t0 + 20, t0 + 40], 'each claim took the one job there was room for; the next followed at once');
    await stop();
  });

  it('submits many runs at once in input order, and submits none when one input is invalid', async () => {
    const p = definePipeline({
      name: 't.bulk',
      version: 1,
      parseInput: (raw) => {
        if (typeof (raw as { n?: unknown }).n !== 'number') throw new ValidationError('n must be a number');
        return raw as { n: number };
      },
      stages: [{ name: 'a', handler: (ctx) => ctx.input }],
    });
    const h = await createEngineHarness([p]);
    const results = await h.kiln.submitMany('t.bulk', [{ input: { n: 1 } }, { input: { n: 2 }, options: { idempotencyKey: 'k' } }, { input: { n: 2 }, options: { idempotencyKey: 'k' } }]);
    assert.deepEqual(results.map((r) => (r.run.input as { n: number }).n), [1, 2, 2]);
    assert.deepEqual(results.map((r) => r.created), [true, true, false]);
    assert.equal(results[2]?.run.id, results[1]?.run.id);
    await assert.rejects(() => h.kiln.submitMany('t.bulk', [{ input: { n: 3 } }, { input: { n: 'x' } }]), (err: ValidationError) => {
      assert.equal(err.code, 'VALIDATION_FAILED');
      assert.equal(err.details?.index, 1);
      return true;
    });
    assert.equal((await h.kiln.listRuns()).length, 2, 'the batch with a bad input submitted nothing');
  });

  it('deduplicates submissions by idempotency key and rejects the key with another input', async () => {
    const h = await createEngineHarness([threeStages('t.dedup')]);
    const one = await h.kiln.submit('t.dedup', { a: 1, b: 2 }, { idempotencyKey: 'k1' });
    const two = await h.kiln.submit('t.dedup', { b: 2, a: 1 }, { idempotencyKey: 'k1' });
    assert.equal(two.created, false);
    assert.equal(two.run.id, one.run.id);
    await assert.rejects(() => h.kiln.submit('t.dedup', { a: 2 }, { idempotencyKey: 'k1' }), { code: 'IDEMPOTENCY_KEY_REUSED' });
    await assert.rejects(() => h.kiln.submit('nope', {}), { code: 'UNKNOWN_PIPELINE' });
  });
  it('a stage policy maxRetriesRunning reaches the claim: past it retries wait while first attempts still run', async () => {
    const tried = new Set<string>();
    const p = threeStages('t.cap', {
      a: (ctx) => {
        if (tried.has(ctx.run.id)) return 'a';
        tried.add(ctx.run.id);
        throw new Error('flaky');
      },
    });
    const h = await createEngineHarness([p], { 't.cap': { a: { maxRetriesRunning: 1, concurrency: 4 } } });
    for (let i = 0; i < 3; i++) await h.kiln.submit('t.cap', { i });
    const worker = h.kiln.createWorker();
    assert.equal(await worker.runOnce(), 3, 'three first attempts, all failing');
    await h.clock.advance(1_000);
    await h.kiln.submit('t.cap', { i: 3 });
    // Three retries are due and four slots free: the cap lets one retry start beside the new first attempt.
    const claimedOnA = async (): Promise<number> => {
      const before = h.recorded.claimed['t.cap.a'] ?? 0;
      await worker.runOnce();
      return (h.recorded.claimed['t.cap.a'] ?? 0) - before;
    };
    assert.equal(await claimedOnA(), 2, 'one retry and the first attempt');
    assert.equal(await claimedOnA(), 1, 'one retry');
    assert.equal(await claimedOnA(), 1, 'the last retry');
    assert.equal(await claimedOnA(), 0);
    assert.equal(tried.size, 4);
  });
});
