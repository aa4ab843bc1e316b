/**
 * A stage record as read through the port, over a stage's whole life (retry, lease expiry, reap,
 * renewal with progress, park and resume, release, completion; dead letter and replay; a run
 * cancelled while its stage is leased): SQLite and PostgreSQL read every step exactly as the
 * memory store (the reference) does. Their claims write no stage record (migrations 0015 and
 * 0020): a leased stage is read from its job, and the record counts the job's claims when the
 * job leaves for good; this checks that every such path reads as before.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import type { ClaimedJob } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { LEASE_MS, claimOne, complete, failJob, leaseOf, stageJob, submit } from '../conformance/fixture.ts';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { usePostgresStores } from '../support/postgres-stores.ts';

const T0 = Date.UTC(2026, 0, 1);

/** Every stage of a run as read, with each field a claim, lease or commit may change. */
async function stagesOf(store: Store, runId: string): Promise<unknown[]> {
  const detail = await store.reads.getRun(runId);
  return (detail?.stages ?? []).map((s) => [s.stage, s.status, s.attempts, s.leaseOwner, s.leaseUntil, s.startedAt, s.finishedAt, s.progress]);
}

/** Runs the life of two runs' stages on `store`, returning the stages as read after every step. */
async function stageLife(store: Store, clock: FakeClock): Promise<unknown[]> {
  await store.migrate();
  const trace: unknown[] = [];
  const step = async (label: string, runId: string): Promise<void> => {
    trace.push([label, await stagesOf(store, runId)]);
    await clock.advance(1_000);
  };
  const run = await submit(store);
  let held: ClaimedJob = await claimOne(store);
  await step('claimed', run.id);
  await failJob(store, held, { action: 'retry', delayMs: 0 });
  await step('retry', run.id);
  held = await claimOne(store, 'demo.a', { workerId: 'w2' });
  await step('claimed again', run.id);
  await clock.advance(LEASE_MS);
  await step('lease expired', run.id);
  await store.jobs.reap();
  await step('reaped', run.id);
  held = await claimOne(store, 'demo.a', { workerId: 'w3' });
  await store.jobs.renew([{ ...leaseOf(held), progress: { done: 1 } }]);
  await step('renewed', run.id);
  await failJob(store, held, { action: 'park' });
  await step('parked', run.id);
  await store.operator.resumeRun(run.id);
  await step('resumed', run.id);
  held = await claimOne(store);
  await store.jobs.release([leaseOf(held)]);
  await step('released', run.id);
  held = await claimOne(store);
  await complete(store, { lease: leaseOf(held), output: { a: 1 }, durationMs: 2, next: stageJob('b') });
  await step('completed', run.id);
  await claimOne(store, 'demo.b');
  await step('b claimed', run.id);
  await store.operator.cancelRun(run.id, 'test');
  await step('cancelled while leased', run.id);

  const other = await submit(store);
  held = await claimOne(store);
  await failJob(store, held, { action: 'dead_letter', rollback: null });
  await step('dead lettered', other.id);
  await store.operator.replayJob(held.job.id);
  await step('replayed', other.id);
  await claimOne(store);
  await step('claimed after replay', other.id);
  return trace;
}

/** The memory store's trace: what every store must read. */
async function referenceTrace(): Promise<unknown[]> {
  const clock = createFakeClock(T0);
  const store = createMemoryStore({ clock, ids: createIdGenerator(clock) });
  try {
    return await stageLife(store, clock);
  } finally {
    await store.close();
  }
}

describe('stage records as read over a stage life', () => {
  it('the memory trace counts every claim, shows each lease and keeps the first start (the reference is not vacuous)', async () => {
    const trace = (await referenceTrace()) as [string, unknown[][]][];
    const stageA = (label: string) => trace.find(([l]) => l === label)?.[1][0];
    assert.deepEqual(stageA('claimed')?.slice(0, 6), ['a', 'running', 1, 'w1', T0 + LEASE_MS, T0]);
    assert.deepEqual(stageA('renewed')?.slice(1, 3), ['running', 3]);
    assert.deepEqual(stageA('completed')?.slice(1, 3), ['succeeded', 4]);
  });

  it('sqlite reads every step as the memory store does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-stage-reads-'));
    const clock = createFakeClock(T0);
    const store = createSqliteStore({ path: join(dir, 'kiln.db'), clock, ids: createIdGenerator(clock) });
    try {
      assert.deepEqual(await stageLife(store, clock), await referenceTrace());
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('postgres', { skip: postgresSkipReason() }, () => {
    const stores = usePostgresStores();

    it('postgres reads every step as the memory store does', async () => {
      const clock = createFakeClock(T0);
      const store = await stores.open({ clock, ids: createIdGenerator(clock) });
      assert.deepEqual(await stageLife(store, clock), await referenceTrace());
    });
  });
});
