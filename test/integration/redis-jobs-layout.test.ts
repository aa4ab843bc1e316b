/**
 * The Redis store's job indexes stay true to its records (the invariants of
 * src/stores/redis/routines/lib-jobs.lua), checked key by key after every step of a scenario
 * that goes through each jobs and operator method: every job sits in exactly the index of its
 * state (with the right score), no index holds a job that is gone or in another state, prios
 * names exactly the non-empty ready zsets, jobkey maps each live job's key to it, runjobs lists
 * each run's jobs, jobs:outputs holds exactly the outputs of the succeeded stage records, a
 * ready job sits in its tenant's tready zset (named in tenants) and, past its first attempt, in
 * retries, and the inflight sets hold exactly the runs queued or running, by tenant (what
 * admission counts).
 * Skipped, with the reason, where no Redis is available.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { createFakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { keyPrefix } from '../../src/stores/redis/index.ts';
import { LEASE_MS, claim, claimOne, complete, failJob, failure, leaseOf, onPipeline, rollbackJob, stageJob, submit } from '../conformance/fixture.ts';
import { createStoreName, redisSkipReason } from '../support/redis-server.ts';
import { useRedisStores } from '../support/redis-stores.ts';

/** Every key of the store under `prefix`, without the prefix. */
async function keysOf(admin: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of admin.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
    keys.push(...batch.map((key) => key.slice(prefix.length)));
  }
  return keys.sort();
}

/** A zset as member -> score. */
async function zsetOf(admin: Redis, key: string): Promise<Map<string, number>> {
  const flat = await admin.zrange(key, 0, -1, 'WITHSCORES');
  const members = new Map<string, number>();
  for (let i = 0; i < flat.length; i += 2) members.set(flat[i] as string, Number(flat[i + 1]));
  return members;
}

/** Asserts the invariants of lib-jobs.lua over every key of the store; `step` names the moment. */
async function assertIndexesTrue(admin: Redis, prefix: string, step: string): Promise<void> {
  const keys = await keysOf(admin, prefix);
  const jobs = new Map<string, Record<string, string>>();
  for (const key of keys.filter((k) => k.startsWith('job:'))) jobs.set(key.slice('job:'.length), await admin.hgetall(prefix + key));
  const indexed = new Map<string, string>();
  const index = async (key: string, state: string, score: (job: Record<string, string>) => number | undefined): Promise<void> => {
    for (const [id, value] of await zsetOf(admin, prefix + key)) {
      const job = jobs.get(id);
      assert.ok(job, `${step}: ${key} holds ${id}, which is gone`);
      assert.equal(job.state, state, `${step}: ${key} holds ${id}, which is ${job.state}`);
      const expected = score(job);
      if (expected !== undefined) assert.equal(value, expected, `${step}: score of ${id} in ${key}`);
      if (key !== 'deadjobs') {
        assert.equal(indexed.get(id), undefined, `${step}: ${id} is in ${key} and ${indexed.get(id)}`);
        indexed.set(id, key);
      }
    }
  };
  for (const key of keys) {
    if (key.startsWith('ready:')) await index(key, 'ready', (j) => (key === `ready:${j.queue}:${j.priority}` ? Number(j.availableAt) : -1));
    else if (key.startsWith('leased:')) await index(key, 'leased', (j) => (key === `leased:${j.queue}` ? Number(j.leaseUntil) : -1));
    else if (key.startsWith('parked:')) await index(key, 'parked', (j) => (key === `parked:${j.queue}` ? 0 : -1));
    else if (key.startsWith('dead:')) await index(key, 'dead', (j) => (key === `dead:${j.queue}` ? 0 : -1));
    else if (key === 'deadjobs') await index(key, 'dead', () => 0);
  }
  for (const [id, job] of jobs) {
    assert.ok(indexed.has(id), `${step}: ${id} (${job.state}) is in no index`);
    assert.equal(await admin.sismember(`${prefix}runjobs:${job.runId}`, id), 1, `${step}: runjobs of ${job.runId} lacks ${id}`);
    assert.equal(await admin.hget(`${prefix}jobrun`, id), null, `${step}: jobrun names ${id}, which is not gone`);
    if (job.state !== 'dead') assert.equal(await admin.hget(`${prefix}jobkey`, job.idempotencyKey as string), id, `${step}: jobkey of live ${id}`);
  }
  for (const [key, id] of Object.entries(await admin.hgetall(`${prefix}jobkey`))) {
    const job = jobs.get(id);
    assert.ok(job && job.state !== 'dead' && job.idempotencyKey === key, `${step}: jobkey ${key} -> ${id}, not its live job`);
  }
  for (const [id, runId] of Object.entries(await admin.hgetall(`${prefix}jobrun`))) {
    const status = await admin.hget(`${prefix}run:${runId}`, 'status');
    assert.ok(status === 'cancelled' || status === 'superseded', `${step}: jobrun keeps ${id} of ${runId}, which is ${status}`);
  }
  for (const key of keys.filter((k) => k.startsWith('runjobs:'))) {
    for (const id of await admin.smembers(prefix + key)) assert.ok(jobs.has(id), `${step}: ${key} holds ${id}, which is gone`);
  }
  for (const key of keys.filter((k) => k.startsWith('prios:'))) {
    const queue = key.slice('prios:'.length);
    for (const priority of await admin.zrange(prefix + key, 0, -1)) {
      assert.ok(keys.includes(`ready:${queue}:${priority}`), `${step}: ${key} names ${priority}, whose ready zset is empty`);
    }
  }
  for (const key of keys.filter((k) => k.startsWith('ready:'))) {
    const [, queue, priority] = /^ready:(.*):([^:]+)$/.exec(key) ?? [];
    assert.notEqual(await admin.zscore(`${prefix}prios:${queue}`, priority as string), null, `${step}: prios:${queue} lacks ${priority}`);
  }
  // The fair-claim entries of ready jobs: tready by tenant tag, tenants naming the non-empty ones, retries.
  const tagOf = (job: Record<string, string>): string => (job.tenant === undefined ? '-' : `+${job.tenant}`);
  for (const [id, job] of jobs) {
    if (job.state !== 'ready') continue;
    const tready = `tready:${job.queue}:${job.priority}:${tagOf(job)}`;
    assert.equal(await admin.zscore(prefix + tready, id), job.availableAt, `${step}: ${tready} lacks ${id} at its availableAt`);
    assert.notEqual(await admin.zscore(`${prefix}tenants:${job.queue}:${job.priority}`, tagOf(job)), null, `${step}: tenants of ${tready}`);
    const retry = await admin.zscore(`${prefix}retries:${job.queue}:${job.priority}`, id);
    assert.equal(retry, Number(job.attempt) >= 1 ? job.availableAt : null, `${step}: retries entry of ${id} (attempt ${job.attempt})`);
  }
  const fairKeys = keys.filter((k) => k.startsWith('tready:') || k.startsWith('retries:'));
  for (const key of fairKeys) {
    for (const id of await admin.zrange(prefix + key, 0, -1)) {
      const job = jobs.get(id);
      assert.ok(job && job.state === 'ready', `${step}: ${key} holds ${id}, which is not a ready job`);
      const expected = key.startsWith('tready:') ? `tready:${job.queue}:${job.priority}:${tagOf(job)}` : `retries:${job.queue}:${job.priority}`;
      assert.equal(key, expected, `${step}: ${id} is in ${key}`);
    }
  }
  for (const key of keys.filter((k) => k.startsWith('tenants:'))) {
    for (const tag of await admin.zrange(prefix + key, 0, -1)) {
      assert.ok(keys.includes(`tready:${key.slice('tenants:'.length)}:${tag}`), `${step}: ${key} names ${tag}, whose tready zset is empty`);
    }
  }
  for (const key of keys.filter((k) => k.startsWith('runs'))) assert.ok(key === 'runs' || key === 'runkey', `${step}: unexpected key ${key}`);
  for (const runId of await admin.zrange(`${prefix}runs`, 0, -1)) {
    const stages = await admin.lrange(`${prefix}stages:${runId}`, 0, -1);
    const succeeded: Record<string, string> = {};
    for (const [i, stage] of stages.entries()) {
      const [status, output] = await admin.hmget(`${prefix}stage:${runId}:${i}`, 'status', 'output');
      if (status === 'succeeded') succeeded[stage] = output ?? 'null';
    }
    assert.deepEqual(await admin.hgetall(`${prefix}jobs:outputs:${runId}`), succeeded, `${step}: jobs:outputs of ${runId}`);
  }
  assert.deepEqual(await inFlightSets(admin, prefix, keys), await runsInFlight(admin, prefix), `${step}: inflight sets`);
}

/** The inflight sets: key -> sorted run ids. */
async function inFlightSets(admin: Redis, prefix: string, keys: readonly string[]): Promise<Record<string, string[]>> {
  const sets: Record<string, string[]> = {};
  for (const key of keys.filter((k) => k === 'inflight' || k.startsWith('inflight:'))) sets[key] = (await admin.smembers(prefix + key)).sort();
  return sets;
}

/** What the inflight sets should be: the queued or running runs by tenant (key -> sorted run ids). */
async function runsInFlight(admin: Redis, prefix: string): Promise<Record<string, string[]>> {
  const sets: Record<string, string[]> = {};
  for (const runId of await admin.zrange(`${prefix}runs`, 0, -1)) {
    const [status, tenant] = await admin.hmget(`${prefix}run:${runId}`, 'status', 'tenant');
    if (status !== 'queued' && status !== 'running') continue;
    const key = tenant === null ? 'inflight' : `inflight:${tenant}`;
    (sets[key] ??= []).push(runId);
  }
  for (const ids of Object.values(sets)) ids.sort();
  return sets;
}

describe('redis store: the job indexes follow the records', { skip: redisSkipReason() }, () => {
  const stores = useRedisStores();

  /** A new store (not migrated yet) on a fake clock, with the admin connection and its key prefix. */
  const openFresh = async (label: string) => {
    const clock = createFakeClock();
    const name = createStoreName(label);
    const store: Store = await stores.open({ name, clock, ids: createIdGenerator(clock) });
    return { clock, store, admin: await stores.admin(), prefix: keyPrefix(name) };
  };

  /** A fresh, migrated store named after `label`, its admin connection and key prefix. */
  const openStore = async (label: string): Promise<{ store: Store; admin: Redis; prefix: string }> => {
    const { store, admin, prefix } = await openFresh(label);
    await store.migrate();
    return { store, admin, prefix };
  };

  it('after every jobs and operator method, each job sits in the index of its state and every index entry is a job in that state', async () => {
    const { clock, store, admin, prefix } = await openFresh('layout');
    const check = (step: string): Promise<void> => assertIndexesTrue(admin, prefix, step);
    await store.migrate();

    await store.jobs.submit([
      ...Array.from({ length: 6 }, (_, i) => ({ ...runRequestOf(i % 5), idempotencyKey: `k${i % 5}`, ...(i % 2 === 0 ? { tenant: 'acme' } : {}) })),
      { ...runRequestOf(10), firstJob: stageJob('a', { priority: 3 }) },
      { ...runRequestOf(11), ...onPipeline('other') },
      { ...runRequestOf(12), subjectId: 'asset', subjectVersion: 1 },
    ]);
    await check('submit');
    await submit(store, { subjectId: 'asset', subjectVersion: 2 });
    await check('supersede');

    const [a1, a2, a3, a4, a5] = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 5, leaseMs: 1_000 });
    assert.ok(a1 && a2 && a3 && a4 && a5);
    await check('claim');
    await store.jobs.commit([
      { type: 'complete', lease: leaseOf(a1), output: { a: 1 }, durationMs: 1, next: stageJob('b') },
      { type: 'complete', lease: leaseOf(a2), output: { a: 2 }, durationMs: 1, next: stageJob('a') },
      { type: 'fail', lease: leaseOf(a3), error: failure('transient'), durationMs: 1, decision: { action: 'retry', delayMs: 500 } },
      { type: 'fail', lease: leaseOf(a4), error: failure('intervention'), durationMs: 1, decision: { action: 'park' } },
      { type: 'fail', lease: leaseOf(a5), error: failure('transient'), durationMs: 1, decision: { action: 'dead_letter', rollback: null } },
    ]);
    await check('commit');

    const duplicate = await claimOne(store, 'demo.a');
    await check('claim of a duplicate of a succeeded stage');
    await store.jobs.release([{ ...leaseOf(duplicate), delayMs: 100, lockWait: true }]);
    await check('release');
    const b = await claimOne(store, 'demo.b', { leaseMs: 1_000 });
    await clock.advance(1_000);
    await store.jobs.reap();
    await check('reap');
    // The reaped job is a retry: a claim under a retry cap takes it (none running yet).
    const [b2] = await claim(store, { queue: 'demo.b', workerId: 'w1', limit: 1, leaseMs: LEASE_MS, maxRetriesRunning: 1 });
    assert.ok(b2);
    await check('claim under a retry cap');
    await failJob(store, b2, { action: 'fail', rollback: rollbackJob('a') }, failure('permanent'));
    await check('fail with a rollback');
    const rollback = (await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 10, leaseMs: LEASE_MS })).find((c) => c.job.kind === 'rollback');
    assert.ok(rollback);
    await complete(store, { lease: leaseOf(rollback), output: null, durationMs: 1, next: null });
    await check('compensation');
    assert.equal(b.job.id, b2.job.id);

    await store.operator.resumeRun(a4.run.id);
    await store.operator.replayJob(a5.job.id);
    await check('resume and replay');
    await store.operator.cancelRun(a5.run.id, 'stop');
    await store.operator.setQueuePaused('demo.a', true);
    await clock.advance(1_000);
    assert.deepEqual(await claim(store, { queue: 'demo.a', workerId: 'w2', limit: 10, leaseMs: LEASE_MS }), []);
    await store.operator.setQueuePaused('demo.a', false);
    assert.equal((await claimOne(store, 'demo.a')).run.id, a4.run.id);
    await submit(store);
    await submit(store);
    assert.equal(await store.operator.drainQueue('demo.a'), 2);
    await check('cancel, pause and drain');
  });

  it('a store of layout 1 (the claim wrote the stage record, ledger entries were hashes) migrates to layout 2 (and on to 5) and reads its stages and ledger as before', async () => {
    const clock = createFakeClock();
    const name = createStoreName('layout1');
    const store: Store = await stores.open({ name, clock, ids: createIdGenerator(clock) });
    const admin = await stores.admin();
    const prefix = keyPrefix(name);
    await store.migrate();
    await submit(store);
    await submit(store);
    const done = await submit(store);
    const [leased, released, completed] = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 3, leaseMs: LEASE_MS });
    assert.ok(leased && released && completed);
    assert.equal(completed.run.id, done.id);
    await complete(store, { lease: leaseOf(completed), output: { n: 1 }, durationMs: 1, next: stageJob('b') });
    const ledger = await store.reads.readLedger(done.id);
    assert.equal(ledger.length, 1);
    await clock.advance(10);
    await store.jobs.release([leaseOf(released)]);
    const expected = await store.reads.getRun(leased.run.id);
    assert.equal(expected?.stages[0]?.status, 'running');
    const expectedReleased = await store.reads.getRun(released.run.id);

    // What layout 1 stored for the same moment: the claim's count, owner and start on the record,
    // the job without startedAt and stageAttempts.
    const startedAt = String(expected?.stages[0]?.startedAt);
    await admin.hset(`${prefix}stage:${leased.run.id}:0`, { status: 'running', attempts: '1', leaseOwner: 'w1', leaseUntil: String(leased.job.leaseUntil), startedAt });
    await admin.hset(`${prefix}stage:${released.run.id}:0`, { status: 'pending', attempts: '0', startedAt });
    for (const id of [leased.job.id, released.job.id]) await admin.hdel(`${prefix}job:${id}`, 'startedAt', 'stageAttempts');
    const [entry] = ledger;
    assert.ok(entry);
    await admin.del(`${prefix}ledger:${entry.key}`);
    await admin.hset(`${prefix}ledger:${entry.key}`, { key: entry.key, runId: entry.runId, stage: entry.stage, kind: entry.kind, output: JSON.stringify(entry.output), completedAt: String(entry.completedAt) });
    await admin.hset(`${prefix}meta`, 'schema_version', '1');

    const migrated = await stores.open({ name, clock, ids: createIdGenerator(clock) });
    assert.deepEqual(await migrated.schemaVersion(), { current: 1, latest: 5 });
    assert.deepEqual((await migrated.migrate()).applied, [2, 3, 4, 5]);
    assert.deepEqual(await migrated.reads.getRun(leased.run.id), expected);
    assert.deepEqual(await migrated.reads.getRun(released.run.id), expectedReleased);
    assert.deepEqual(await admin.hmget(`${prefix}stage:${leased.run.id}:0`, 'leaseOwner', 'leaseUntil'), [null, null]);
    assert.deepEqual(await migrated.reads.readLedger(done.id), ledger);
    assert.equal(await admin.type(`${prefix}ledger:${entry.key}`), 'string');

    await complete(migrated, { lease: leaseOf(leased), output: 'done', durationMs: 1, next: stageJob('b') });
    const stage = (await migrated.reads.getRun(leased.run.id))?.stages[0];
    assert.deepEqual([stage?.status, stage?.attempts, stage?.startedAt, stage?.leaseOwner], ['succeeded', 1, Number(startedAt), null]);
    const again = await claimOne(migrated, 'demo.a', { workerId: 'w2' });
    assert.equal(again.job.id, released.job.id);
    assert.equal((await migrated.reads.getRun(released.run.id))?.stages[0]?.attempts, 1);
  });

  it('layout 3 fills the inflight sets of a store written at layout 2 from its queued and running runs', async () => {
    const { store, admin, prefix } = await openStore('layout-v2');
    await store.jobs.submit([runRequestOf(3), { ...runRequestOf(2), tenant: 'acme' }, { ...runRequestOf(4), tenant: 'acme' }]);
    await claimOne(store, 'demo.a');
    const expected = await runsInFlight(admin, prefix);
    assert.deepEqual(Object.values(expected).map((ids) => ids.length).sort(), [1, 2]);
    // As a kiln of layout 2 left it: no inflight sets.
    await admin.del(...Object.keys(expected).map((key) => prefix + key));
    await admin.hset(`${prefix}meta`, 'schema_version', '2');
    assert.deepEqual((await store.migrate()).applied, [3, 4, 5]);
    assert.deepEqual(await inFlightSets(admin, prefix, await keysOf(admin, prefix)), expected);
  });

  it('layout 5 indexes the ready jobs of a store written at layout 4 by tenant and retries', async () => {
    const { store, admin, prefix } = await openFresh('layout-upgrade');
    await store.migrate();
    await store.jobs.submit(Array.from({ length: 6 }, (_, i) => runRequestOf(i)));
    const [first] = await claim(store, { queue: 'demo.a', workerId: 'w1', limit: 1, leaseMs: LEASE_MS });
    assert.ok(first);
    await failJob(store, first, { action: 'retry', delayMs: 0 }, failure('transient'));
    // As a kiln of layout 4 left it: no fair-claim entries.
    const fair = (await keysOf(admin, prefix)).filter((k) => /^(tready|tenants|retries):/.test(k));
    assert.ok(fair.length >= 4, 'the scenario has tenant and retry entries to rebuild');
    await admin.del(...fair.map((k) => prefix + k));
    await admin.hset(`${prefix}meta`, 'schema_version', '4');

    assert.deepEqual((await store.migrate()).applied, [5]);
    await assertIndexesTrue(admin, prefix, 'upgrade');
  });
});

let inputs = 0;

/** A submission of `demo` with its own input. */
function runRequestOf(n: number) {
  inputs += 1;
  return {
    pipeline: 'demo',
    pipelineVersion: 1,
    input: { n, inputs },
    inputChecksum: `checksum-${n}`,
    stages: ['a', 'b', 'c'],
    firstJob: stageJob('a'),
    // Two tenants and the tenant-less: the fair-claim entries of each.
    ...(n % 3 === 0 ? {} : { tenant: n % 3 === 1 ? 'acme' : 'other:tenant' }),
  };
}
