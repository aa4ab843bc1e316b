/**
 * PostgreSQL's set-based batch paths (migration 0004): a commit batch made only of completions of
 * distinct runs is applied set-wise, and a claim of hundreds of jobs is one statement. These
 * tests pin what the conformance suite checks item by item on the set-wise path: refused items
 * inside such a batch (stale token, expired lease, cancelled run) change nothing and are told
 * exactly what the item-by-item path tells them, and a large claim hands every job out once with
 * its run, stage record and outputs right. A submission batch without subjects (migration 0005)
 * is one statement: batches sharing idempotency keys, submitted at once in opposite orders,
 * create one run per key and never deadlock.
 */
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { contentHash } from '../../src/core/canonical.ts';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import type { ClaimedJob, CommitItem, JobSpec, SubmitRunRequest } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';

const skip = postgresSkipReason();
const LEASE_MS = 30_000;
const STAGES = ['a', 'b'];

function stageJob(stage: string): JobSpec {
  return { stage, queue: `demo.${stage}`, kind: 'stage', maxAttempts: 3, priority: 0 };
}

async function submitOne(store: Store, n: number): Promise<string> {
  const input = { n };
  const [result] = await store.jobs.submit([
    { pipeline: 'demo', pipelineVersion: 1, input, inputChecksum: contentHash(input), stages: STAGES, firstJob: stageJob('a') },
  ]);
  assert.ok(result);
  return result.run.id;
}

function complete(claimed: ClaimedJob, next: string | null, token = claimed.job.leaseToken ?? ''): CommitItem {
  return { type: 'complete', lease: { jobId: claimed.job.id, token }, output: { n: claimed.job.stage }, durationMs: 1, next: next === null ? null : stageJob(next) };
}

describe('postgres set-based batch paths', { skip }, () => {
  const opened: Store[] = [];
  const schemas: string[] = [];
  let admin: pg.Pool | undefined;

  const open = async (clock?: FakeClock): Promise<Store> => {
    const schema = createSchemaName();
    schemas.push(schema);
    const store = createPostgresStore({ connectionString: (await sharedPostgres()).url, schema, ...(clock ? { clock } : {}) });
    opened.push(store);
    await store.migrate();
    return store;
  };

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    admin ??= new pg.Pool({ connectionString: (await sharedPostgres()).url, max: 1 });
    for (const schema of schemas.splice(0)) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  after(async () => {
    await admin?.end();
    await (await sharedPostgres()).stop();
  });

  it('a completions-only batch commits the held leases and refuses stale, expired and cancelled ones without changing them', async () => {
    const clock = createFakeClock();
    const store = await open(clock);
    const runIds: string[] = [];
    for (let n = 0; n < 5; n++) runIds.push(await submitOne(store, n));
    // The expired one is claimed first with a short lease, the rest with a long one.
    const [expired] = await store.jobs.claim([{ queue: 'demo.a', workerId: 'w', limit: 1, leaseMs: 10 }]);
    const held = await store.jobs.claim([{ queue: 'demo.a', workerId: 'w', limit: 4, leaseMs: LEASE_MS }]);
    assert.ok(expired);
    assert.equal(held.length, 4);
    clock.advance(20);
    const [first, second, stale, cancelled] = held as [ClaimedJob, ClaimedJob, ClaimedJob, ClaimedJob];
    await store.operator.cancelRun(cancelled.job.runId, 'test');

    const results = await store.jobs.commit([
      complete(first, 'b'),
      complete(stale, 'b', 'not-the-token'),
      complete(expired, 'b'),
      complete(second, null),
      complete(cancelled, 'b'),
    ]);

    assert.deepEqual(results, [
      { outcome: 'committed', runStatus: 'running' },
      { outcome: 'lease_lost' },
      { outcome: 'lease_lost' },
      { outcome: 'committed', runStatus: 'succeeded' },
      { outcome: 'cancelled' },
    ]);
    // Refused items left their jobs, stage records and ledgers as they were.
    for (const refused of [stale, expired]) {
      const job = await store.reads.getJob(refused.job.id);
      assert.equal(job?.state, 'leased');
      const detail = await store.reads.getRun(refused.job.runId);
      assert.equal(detail?.run.currentStage, 'a');
      assert.equal(detail?.stages[0]?.status, 'running');
      assert.deepEqual(await store.reads.readLedger(refused.job.runId), []);
    }
    const moved = await store.reads.getRun(first.job.runId);
    assert.equal(moved?.run.currentStage, 'b');
    assert.equal(moved?.stages[0]?.status, 'succeeded');
    assert.deepEqual(moved?.stages[0]?.output, { n: 'a' });
    assert.deepEqual((await store.reads.readLedger(first.job.runId)).map((e) => [e.stage, e.output]), [['a', { n: 'a' }]]);
    const [next] = await store.jobs.claim([{ queue: 'demo.b', workerId: 'w', limit: 10, leaseMs: LEASE_MS }]);
    assert.equal(next?.job.runId, first.job.runId);
    assert.deepEqual(next?.outputs, { a: { n: 'a' } });
    assert.equal((await store.reads.getRun(second.job.runId))?.run.status, 'succeeded');
  });

  it('one claim of 300 jobs hands each out once, starts each run and gives later stages their outputs', async () => {
    const store = await open();
    for (let n = 0; n < 300; n++) await submitOne(store, n);
    const claimed = await store.jobs.claim([
      { queue: 'demo.a', workerId: 'w1', limit: 200, leaseMs: LEASE_MS },
      { queue: 'demo.a', workerId: 'w2', limit: 200, leaseMs: LEASE_MS },
    ]);
    assert.equal(claimed.length, 300);
    assert.equal(new Set(claimed.map((c) => c.job.id)).size, 300);
    assert.deepEqual(
      claimed.map((c) => c.job.leaseOwner),
      [...Array<string>(200).fill('w1'), ...Array<string>(100).fill('w2')],
    );
    for (const c of claimed) {
      assert.equal(c.run.status, 'running');
      assert.equal(c.run.id, c.job.runId);
      assert.deepEqual(c.outputs, {});
    }
    assert.equal((await store.reads.getRun(claimed[0]!.job.runId))?.run.status, 'running');

    const results = await store.jobs.commit(claimed.map((c) => complete(c, 'b')));
    assert.ok(results.every((r) => r.outcome === 'committed' && r.runStatus === 'running'));
    const next = await store.jobs.claim([{ queue: 'demo.b', workerId: 'w1', limit: 500, leaseMs: LEASE_MS }]);
    assert.equal(next.length, 300);
    for (const c of next) {
      assert.deepEqual(c.outputs, { a: { n: 'a' } });
      assert.equal(c.run.status, 'running');
      assert.equal(c.run.currentStage, 'b');
    }
  });

  it('concurrent submission batches sharing idempotency keys in opposite orders create one run per key, without deadlock', async () => {
    const store = await open();
    const request = (key: string): SubmitRunRequest => {
      const input = { key };
      return { pipeline: 'demo', pipelineVersion: 1, input, inputChecksum: contentHash(input), stages: STAGES, firstJob: stageJob('a'), idempotencyKey: key };
    };
    // Two connections open before the batches, so that they do run at the same time.
    await Promise.all([store.reads.listRuns({ limit: 1 }), store.reads.listJobs({ limit: 1 })]);
    for (let round = 0; round < 5; round++) {
      const keys = Array.from({ length: 200 }, (_, i) => `r${round}-k${i}`);
      const [forward, backward] = await Promise.all([
        store.jobs.submit(keys.map(request)),
        store.jobs.submit([...keys].reverse().map(request)),
      ]);
      const reversed = [...backward].reverse();
      forward.forEach((result, i) => {
        assert.equal(result.run.id, reversed[i]?.run.id, `key ${keys[i]} has one run`);
        assert.notEqual(result.created, reversed[i]?.created, 'one of the two batches created it');
      });
    }
    assert.equal((await store.reads.listRuns({ limit: 2000 })).length, 1000);
    assert.equal((await store.reads.listJobs({ limit: 2000 })).length, 1000);
  });
});
