/**
 * Engine log lines about a job carry `pipeline, run_id, stage, job_id, attempt, trace_id` (the
 * run's trace id, the one its spans and the client's `traceparent` share), whether the engine
 * wrote them or the handler did through `ctx.logger`.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { StageFailure } from '../../src/core/errors.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import type { ArtifactStore } from '../../src/core/ports/artifact-store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { createLogger } from '../../src/observe/logger.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';

const JOB_FIELDS = ['pipeline', 'run_id', 'stage', 'job_id', 'attempt', 'trace_id'] as const;

const noArtifacts = {} as ArtifactStore;

test('every log line about a job, the engine\'s and the handler\'s, names its pipeline, run, stage, job, attempt and trace', async () => {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const logger = createLogger({ level: 'debug', destination: stream, format: 'json' });
  const pipeline = definePipeline({
    name: 'logs.demo',
    version: 1,
    defaults: { backoff: { baseMs: 1, capMs: 2 } },
    stages: [
      {
        name: 'first',
        handler: (ctx) => {
          ctx.logger.info({ note: 'handler' }, 'hello from the handler');
          if (ctx.attempt === 1) throw StageFailure.retryable('once', { code: 'ONCE' });
          return null;
        },
      },
    ],
  });
  const store = createMemoryStore();
  await store.migrate();
  const kiln = createKiln({ store, artifacts: noArtifacts, pipelines: [pipeline], logger });
  const worker = kiln.createWorker({ pollMs: 2 });
  worker.start();
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const { run } = await kiln.submit('logs.demo', {}, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
  assert.equal((await kiln.waitForRun(run.id, { timeoutMs: 5_000 })).run.status, 'succeeded');
  await worker.stop(1_000);
  await store.close();

  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const aboutJobs = lines.filter((l) => ['stage attempt failed', 'stage succeeded', 'hello from the handler'].includes(String(l['msg'])));
  assert.deepEqual(aboutJobs.map((l) => [l['msg'], l['attempt']]), [
    ['hello from the handler', 1],
    ['stage attempt failed', 1],
    ['hello from the handler', 2],
    ['stage succeeded', 2],
  ]);
  for (const line of aboutJobs) {
    for (const field of JOB_FIELDS) assert.ok(line[field] !== undefined && line[field] !== null, `${String(line['msg'])} has ${field}`);
    assert.equal(line['pipeline'], 'logs.demo');
    assert.equal(line['run_id'], run.id);
    assert.equal(line['stage'], 'first');
    assert.equal(line['trace_id'], traceId);
  }
});
