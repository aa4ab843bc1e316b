/**
 * The engine reports the events behind issue 10's metrics through the observer port: dedup hits
 * at submit, claims, attempts and enqueue-to-done time of successes, run durations, timeouts,
 * heartbeat losses, failed artifact writes and requested publications.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidationError } from '../../src/core/errors.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import type { ArtifactStore } from '../../src/core/ports/artifact-store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { createEngineHarness, createRecorder, deferred } from '../support/engine-harness.ts';

/** One stage whose handler the test supplies. */
function oneStage(name: string, handler: Parameters<typeof definePipeline>[0]['stages'][number]['handler'], policy = {}) {
  return definePipeline({ name, version: 1, defaults: { backoff: { baseMs: 100, capMs: 100 } }, stages: [{ name: 'a', handler, policy }] });
}

describe('engine metric events', () => {
  it('a submission answered with an existing run is a dedup hit', async () => {
    const h = await createEngineHarness([oneStage('m.dedup', () => null)]);
    await h.kiln.submit('m.dedup', {}, { idempotencyKey: 'k' });
    await h.kiln.submit('m.dedup', {}, { idempotencyKey: 'k' });
    await h.kiln.submitMany('m.dedup', [{ input: {}, options: { idempotencyKey: 'k' } }, { input: {} }]);
    assert.equal(h.recorded.dedupHits, 2);
  });

  it('a stage that succeeds on its second attempt reports both claims, attempt 2, its enqueue-to-done time and the run duration', async () => {
    const h = await createEngineHarness([oneStage('m.retry', (ctx) => (ctx.attempt === 1 ? Promise.reject(new Error('once')) : null))]);
    const { run } = await h.kiln.submit('m.retry', {});
    const worker = h.kiln.createWorker();
    await worker.runOnce();
    await h.clock.advance(1_000);
    await worker.runOnce();
    assert.equal((await h.kiln.getRun(run.id)).run.status, 'succeeded');
    assert.deepEqual(h.recorded.claimed, { 'm.retry.a': 2 });
    const [first, second] = h.recorded.executions;
    assert.deepEqual([first?.outcome, first?.attempt, second?.outcome, second?.attempt], ['retried', 1, 'succeeded', 2]);
    assert.equal(second?.sinceEnqueuedMs, 1_000, 'enqueue-to-done spans the backoff');
    assert.deepEqual(h.recorded.runsFinished, ['m.retry:succeeded:1000']);
  });

  it('a handler past its timeout counts as a timeout; a cancelled run reports its duration', async () => {
    const h = await createEngineHarness([
      oneStage('m.slow', (ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))), { timeoutMs: 1_000 }),
    ]);
    const { run } = await h.kiln.submit('m.slow', {});
    const worker = h.kiln.createWorker({ pollMs: 100 });
    worker.start();
    await h.clock.advance(100);
    await h.clock.advance(1_000);
    assert.deepEqual(h.recorded.timeouts, ['m.slow.a']);
    await worker.stop(0);
    await h.clock.advance(900);
    await h.kiln.cancelRun(run.id);
    assert.deepEqual(h.recorded.runsFinished, ['m.slow:cancelled:2000']);
  });

  it('a heartbeat that finds the lease gone counts a heartbeat loss and aborts the handler', async () => {
    const started = deferred();
    let reason: unknown;
    const h = await createEngineHarness([
      oneStage(
        'm.lost',
        (ctx) =>
          new Promise((_, reject) => {
            started.resolve();
            ctx.signal.addEventListener('abort', () => ((reason = ctx.signal.reason), reject(ctx.signal.reason)));
          }),
        { heartbeatMs: 500, leaseMs: 5_000 },
      ),
    ]);
    await h.kiln.submit('m.lost', {});
    const worker = h.kiln.createWorker({ pollMs: 100 });
    worker.start();
    await h.clock.advance(100);
    await started.promise;
    // Another party hands the job back behind the worker's back: its token no longer matches.
    const [job] = await h.store.reads.listJobs({ queue: 'm.lost.a', limit: 1 });
    assert.ok(job?.leaseToken);
    await h.store.jobs.release([{ jobId: job.id, token: job.leaseToken }]);
    for (let i = 0; i < 10; i++) await h.clock.advance(100);
    assert.deepEqual(h.recorded.heartbeatLosses, ['m.lost.a']);
    assert.equal((reason as { code?: string }).code, 'LEASE_LOST');
    await worker.stop(0);
  });

  it('a committed stage reports the profiles it published', async () => {
    const h = await createEngineHarness([
      oneStage('m.publish', (ctx) => {
        ctx.publish({ subjectId: 's', profile: 'thumb', artifactRef: `sha256:${'a'.repeat(64)}`, subjectVersion: 1 });
        ctx.publish({ subjectId: 's', profile: 'preview', artifactRef: `sha256:${'b'.repeat(64)}`, subjectVersion: 1 });
        return null;
      }),
    ]);
    await h.kiln.submit('m.publish', {});
    await h.kiln.createWorker().runOnce();
    assert.deepEqual(h.recorded.publicationsRequested, ['m.publish:thumb', 'm.publish:preview']);
  });

  it('a failed artifact write is counted; a write the store refuses as invalid is not', async () => {
    let refuse = true;
    const artifacts = {
      put: () => Promise.reject(refuse ? new ValidationError('too large', { code: 'PAYLOAD_TOO_LARGE' }) : new Error('EIO: disk on fire')),
    } as unknown as ArtifactStore;
    const { observer, recorded } = createRecorder();
    const store = createMemoryStore();
    const kiln = createKiln({ store, artifacts, pipelines: [], observer });
    await assert.rejects(kiln.artifacts.put(new Uint8Array(1)), ValidationError);
    refuse = false;
    await assert.rejects(kiln.artifacts.put(new Uint8Array(1)), /EIO/);
    assert.equal(recorded.artifactWriteFailures, 1);
  });
});
