/**
 * The worker's activity recorder: committed executions and idempotent skips are counted per queue
 * in memory (refused commits are not), every event still reaches the inner observer, and a report
 * hands the counts to `stats.recordActivity` — or keeps them for the next report when it fails.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFakeClock } from '../../src/core/clock.ts';
import { StoreUnavailableError } from '../../src/core/errors.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { noopObserver, type StageOutcome } from '../../src/core/observer.ts';
import { createActivityRecorder } from '../../src/engine/activity-recorder.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';

/** What the store recorded in the last hour, per queue: [completed, failed]. */
async function recorded(store: ReturnType<typeof createMemoryStore>): Promise<Record<string, [number, number]>> {
  const report = await store.stats.queueActivity({ bucketMinutes: 60, buckets: 1 });
  return Object.fromEntries(report.queues.map((q) => [q.queue, [q.completed[0] ?? 0, q.failed[0] ?? 0]]));
}

describe('activity recorder', () => {
  it('counts committed outcomes and skips per queue, passes every event on, and reports on flush', async () => {
    const store = createMemoryStore({ clock: createFakeClock() });
    await store.migrate();
    const seen: string[] = [];
    const recorder = createActivityRecorder(store, { ...noopObserver, stageExecuted: (e) => seen.push(e.outcome) }, silentLogger);
    const execute = (stage: string, outcome: StageOutcome): void =>
      recorder.observer.stageExecuted({ pipeline: 'demo', stage, outcome, durationMs: 1, rollback: false });
    for (const outcome of ['succeeded', 'succeeded', 'retried', 'dead_lettered', 'lease_lost', 'cancelled'] as const) execute('a', outcome);
    execute('b', 'failed');
    execute('b', 'parked');
    recorder.observer.idempotentSkip('demo', 'b');
    assert.equal(seen.length, 8, 'the inner observer sees every execution');
    assert.deepEqual(await recorded(store), {}, 'nothing is written before a report');

    await recorder.flush();
    assert.deepEqual(await recorded(store), { 'demo.a': [2, 2], 'demo.b': [1, 2] });
    await recorder.flush();
    assert.deepEqual(await recorded(store), { 'demo.a': [2, 2], 'demo.b': [1, 2] }, 'a report hands each count over once');
  });

  it('keeps the counts of a failed report and adds them to the next one', async () => {
    const store = createMemoryStore({ clock: createFakeClock() });
    await store.migrate();
    const recordActivity = store.stats.recordActivity;
    let down = true;
    store.stats.recordActivity = async (samples) => {
      if (down) throw new StoreUnavailableError('down');
      return recordActivity(samples);
    };
    const recorder = createActivityRecorder(store, noopObserver, silentLogger);
    recorder.observer.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'succeeded', durationMs: 1, rollback: false });
    await recorder.flush();
    recorder.observer.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'retried', durationMs: 1, rollback: true });
    down = false;
    await recorder.flush();
    assert.deepEqual(await recorded(store), { 'demo.a': [1, 1] });
  });
});
