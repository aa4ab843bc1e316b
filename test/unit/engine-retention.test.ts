/**
 * Retention in the engine, on the memory store and a fake clock: the reaper's prune pass runs one
 * bounded batch when due (the next at once while batches come back full), the worker's reaper
 * prunes expired runs and stops pruning once the worker stopped, and `pruneExpired` (kiln prune)
 * takes batches until none is full.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../src/core/logger.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import { createRetentionPass, pruneExpired, type RetentionSettings } from '../../src/engine/retention.ts';
import { createEngineHarness, type EngineHarness } from '../support/engine-harness.ts';

const one = definePipeline({ name: 't.one', version: 1, stages: [{ name: 'only', handler: () => 'done' }] });

const KEEP_MS = 10_000;

/** Succeeded runs kept 10 s, the rest forever; batches of 2 every 5 s. */
const SETTINGS: RetentionSettings = { succeededMs: KEEP_MS, failedMs: null, cancelledMs: null, requestsMs: null, batchSize: 2, intervalMs: 5_000 };

/** Moves the fake clock on in 50 ms steps, so timers fire in order. */
async function advance(h: EngineHarness, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 50) await h.clock.advance(50);
}

/** Submits `n` runs of t.one and lets a worker without retention finish them. */
async function succeeded(h: EngineHarness, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await h.kiln.submit('t.one', { i, at: h.clock.now() });
  const worker = h.kiln.createWorker();
  let done = 0;
  for (let ran = await worker.runOnce(); ran > 0; ran = await worker.runOnce()) done += ran;
  assert.equal(done, n);
}

async function runCount(h: EngineHarness): Promise<number> {
  return (await h.store.reads.listRuns({ limit: 100 })).length;
}

describe('retention in the engine', () => {
  it('the prune pass takes one batch when due, the next at once while batches are full, then waits an interval', async () => {
    const h = await createEngineHarness([one]);
    await succeeded(h, 5);
    const pass = createRetentionPass({ store: h.store, clock: h.clock, logger: silentLogger }, SETTINGS);
    await h.clock.advance(SETTINGS.intervalMs - 1);
    assert.equal(await pass.tick(), null, 'the first batch is due one interval after start');
    await h.clock.advance(1);
    assert.equal((await pass.tick())?.runs, 0, 'due, but nothing has expired');
    await h.clock.advance(KEEP_MS);
    assert.equal((await pass.tick())?.runs, 2);
    assert.equal((await pass.tick())?.runs, 2, 'a full batch: the next is due at once');
    assert.equal((await pass.tick())?.runs, 1);
    assert.equal(await pass.tick(), null, 'not full: the next waits an interval');
    assert.equal(await runCount(h), 0);
    await h.clock.advance(SETTINGS.intervalMs);
    assert.equal((await pass.tick())?.runs, 0);
  });

  it('an interval of 0 never prunes', async () => {
    const h = await createEngineHarness([one]);
    await succeeded(h, 1);
    const pass = createRetentionPass({ store: h.store, clock: h.clock, logger: silentLogger }, { ...SETTINGS, intervalMs: 0 });
    await h.clock.advance(1_000_000);
    assert.equal(await pass.tick(), null);
    assert.equal(await runCount(h), 1);
  });

  it("a worker's reaper prunes expired runs in batches, and prunes nothing once the worker stopped", async () => {
    const h = await createEngineHarness([one]);
    const worker = h.kiln.createWorker({ pollMs: 50, reapMs: 1_000, retention: SETTINGS });
    worker.start();
    for (let i = 0; i < 3; i++) await h.kiln.submit('t.one', { i });
    await advance(h, 500);
    assert.deepEqual((await h.store.reads.listRuns({ limit: 10 })).map((r) => r.status), ['succeeded', 'succeeded', 'succeeded']);
    await advance(h, 9_000);
    assert.equal(await runCount(h), 3, 'not expired yet');
    await advance(h, 8_000);
    assert.equal(await runCount(h), 0, 'pruned by the reaper, two batches');

    await worker.stop();
    await succeeded(h, 1);
    await advance(h, 60_000);
    assert.equal(await runCount(h), 1, 'a stopped worker prunes nothing');
  });

  it('pruneExpired takes batches until one is not full; a dry run counts without deleting', async () => {
    const h = await createEngineHarness([one]);
    await succeeded(h, 5);
    await h.clock.advance(KEEP_MS);
    const expected = { runs: 5, stageRecords: 5, ledgerEntries: 5, jobs: 0, attempts: 0, requests: 0 };
    assert.deepEqual(await pruneExpired(h.store, SETTINGS, { dryRun: true }), expected);
    assert.equal(await runCount(h), 5);
    assert.deepEqual(await pruneExpired(h.store, SETTINGS), expected);
    assert.equal(await runCount(h), 0);
  });
});
