/**
 * Compensations on the memory store: a stage that may leave a partial effect has its own rollback
 * run first when it fails for good; a compensation that keeps failing parks its run (whether the
 * run was failing permanently or dead-lettered), visible and resumable, and is counted as
 * `kiln_rollback_failures_total`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StageFailure } from '../../src/core/errors.ts';
import { definePipeline, type StageHandler } from '../../src/core/pipeline/define-pipeline.ts';
import { createMetrics } from '../../src/observe/metrics.ts';
import { createEngineHarness } from '../support/engine-harness.ts';

/** Stages a then b; b fails with `failB`; both record their compensations in `order`. */
function twoStages(name: string, order: string[], failB: () => never, rollbackA: StageHandler = () => (order.push('undo a'), null)) {
  return definePipeline({
    name,
    version: 1,
    defaults: { maxAttempts: 2, backoff: { baseMs: 0, capMs: 0 } },
    stages: [
      { name: 'a', handler: () => 'a done', rollback: rollbackA },
      { name: 'b', handler: failB, rollback: () => (order.push('undo b'), null), rollbackOnFailure: true },
    ],
  });
}

async function drain(worker: { runOnce(): Promise<number> }, passes = 10): Promise<void> {
  for (let i = 0; i < passes; i++) await worker.runOnce();
}

describe('compensations', () => {
  it('a stage with rollbackOnFailure that fails for good is compensated first, then the earlier stages, in reverse order', async () => {
    const order: string[] = [];
    const h = await createEngineHarness([twoStages('t.own', order, () => { throw StageFailure.permanent('no'); })]);
    const { run } = await h.kiln.submit('t.own', {});
    await drain(h.kiln.createWorker());
    const detail = await h.kiln.getRun(run.id);
    assert.deepEqual(order, ['undo b', 'undo a']);
    assert.equal(detail.run.status, 'failed');
    assert.deepEqual(detail.stages.map((s) => [s.status, s.rollbackStatus]), [['succeeded', 'succeeded'], ['failed', 'succeeded']]);
  });

  it('a compensation failing on every attempt parks the run; resume runs it again and the run then ends failed', async () => {
    const order: string[] = [];
    let rollbackWorks = false;
    const flaky: StageHandler = () => {
      if (!rollbackWorks) throw new Error('cannot undo a yet');
      order.push('undo a');
      return null;
    };
    const h = await createEngineHarness([twoStages('t.park', order, () => { throw StageFailure.permanent('no'); }, flaky)]);
    const { run } = await h.kiln.submit('t.park', {});
    const worker = h.kiln.createWorker();
    await drain(worker);
    const parked = await h.kiln.getRun(run.id);
    assert.equal(parked.run.status, 'parked');
    assert.equal(parked.run.error?.message, 'no', 'the run keeps the error that made it fail');
    assert.deepEqual(parked.stages.map((s) => s.rollbackStatus), ['pending', 'succeeded']);
    const [job] = await h.kiln.listJobs({ runId: run.id, state: 'parked' });
    assert.equal(job?.kind, 'rollback');
    assert.equal(job?.lastError?.message, 'cannot undo a yet');
    const rollbackOutcomes = h.recorded.executions.filter((e) => e.rollback && e.stage === 'a').map((e) => e.outcome);
    assert.deepEqual(rollbackOutcomes, ['retried', 'parked']);

    rollbackWorks = true;
    await h.kiln.resumeRun(run.id);
    await drain(worker);
    const ended = await h.kiln.getRun(run.id);
    assert.equal(ended.run.status, 'failed');
    assert.deepEqual(order, ['undo b', 'undo a']);
    assert.deepEqual(ended.stages.map((s) => s.rollbackStatus), ['succeeded', 'succeeded']);
  });

  it('a compensation of a dead-lettered run that fails permanently parks the run at once', async () => {
    const order: string[] = [];
    const broken: StageHandler = () => {
      throw StageFailure.permanent('undo impossible');
    };
    const h = await createEngineHarness([twoStages('t.dead', order, () => { throw new Error('flaky'); }, broken)]);
    const { run } = await h.kiln.submit('t.dead', {});
    await drain(h.kiln.createWorker());
    const detail = await h.kiln.getRun(run.id);
    assert.equal(detail.run.status, 'parked');
    assert.equal(detail.stages[1]?.status, 'dead_lettered');
    assert.deepEqual(order, ['undo b']);
    assert.deepEqual(h.recorded.executions.filter((e) => e.rollback).map((e) => [e.stage, e.outcome]), [['b', 'succeeded'], ['a', 'parked']]);
  });

  it('kiln_rollback_failures_total counts compensations that parked their run, by pipeline and stage', async () => {
    const metrics = createMetrics();
    const base = { pipeline: 'p', durationMs: 1 } as const;
    metrics.observer.stageExecuted({ ...base, stage: 'a', outcome: 'retried', rollback: true });
    metrics.observer.stageExecuted({ ...base, stage: 'a', outcome: 'parked', rollback: true });
    metrics.observer.stageExecuted({ ...base, stage: 'b', outcome: 'parked', rollback: false });
    metrics.observer.localCacheRequest('fast', 'hit');
    const text = await metrics.render();
    assert.match(text, /^kiln_rollback_failures_total\{pipeline="p",stage="a"\} 1$/m);
    assert.doesNotMatch(text, /^kiln_rollback_failures_total\{pipeline="p",stage="b"\}/m);
    assert.match(text, /^kiln_local_cache_requests_total\{cache="fast",result="hit"\} 1$/m);
  });
});
