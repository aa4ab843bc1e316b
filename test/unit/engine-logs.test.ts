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
import { LazyChildLogger, type Logger } from '../../src/core/logger.ts';
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

test('a job that logs nothing at the enabled levels builds no child logger; one that does gets its bindings', async () => {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const pino = createLogger({ level: 'info', destination: stream, format: 'json' });
  // Counts the children made with a job's bindings (the worker's own child has none of them).
  let jobChildren = 0;
  const counting = (parent: Logger): Logger => ({
    debug: parent.debug.bind(parent),
    info: parent.info.bind(parent),
    warn: parent.warn.bind(parent),
    error: parent.error.bind(parent),
    isLevelEnabled: (level) => parent.isLevelEnabled?.(level) ?? true,
    child: (bindings) => {
      if ('job_id' in bindings) jobChildren += 1;
      return counting(parent.child(bindings));
    },
  });
  const pipeline = definePipeline({
    name: 'logs.lazy',
    version: 1,
    stages: [
      {
        name: 'quiet',
        handler: (ctx) => {
          ctx.logger.debug({ note: 'not written at info' }, 'quiet');
          return null;
        },
      },
      {
        name: 'loud',
        handler: (ctx) => {
          ctx.logger.info({ note: 'handler' }, 'loud stage ran');
          return null;
        },
      },
    ],
  });
  const store = createMemoryStore();
  await store.migrate();
  const kiln = createKiln({ store, artifacts: noArtifacts, pipelines: [pipeline], logger: counting(pino) });
  const worker = kiln.createWorker({ pollMs: 2 });
  worker.start();
  const runs = await Promise.all([1, 2, 3].map(async (n) => (await kiln.submit('logs.lazy', { n })).run));
  for (const run of runs) assert.equal((await kiln.waitForRun(run.id, { timeoutMs: 5_000 })).run.status, 'succeeded');
  await worker.stop(1_000);
  await store.close();

  // Six jobs ran; only the three 'loud' ones logged at info.
  assert.equal(jobChildren, 3);
  // A child of a job's logger (a locked stage's) writes through pino with both sets of bindings.
  new LazyChildLogger(pino, { job_id: 'job_x' }).child({ lock: 'k' }).warn({ fence: 7 }, 'lock lost');
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(lines.filter((l) => l['msg'] === 'quiet' || l['msg'] === 'stage succeeded'), []);
  const loud = lines.filter((l) => l['msg'] === 'loud stage ran');
  assert.deepEqual(loud.map((l) => l['run_id']).sort(), runs.map((r) => r.id).sort());
  assert.deepEqual(
    lines.filter((l) => l['msg'] === 'lock lost').map((l) => [l['job_id'], l['lock'], l['fence'], l['level']]),
    [['job_x', 'k', 7, 40]],
  );
  for (const line of loud) {
    assert.equal(line['stage'], 'loud');
    assert.equal(line['note'], 'handler');
    assert.equal(line['level'], 30);
  }
});

test('a logger without isLevelEnabled (written against the older port) still gets every job line with its bindings', () => {
  const lines: Record<string, unknown>[] = [];
  const recording = (bindings: Record<string, unknown>): Logger => {
    const at = (level: string) => (objOrMsg: Record<string, unknown> | string, msg?: string) =>
      void lines.push(typeof objOrMsg === 'string' ? { ...bindings, level, msg: objOrMsg } : { ...bindings, ...objOrMsg, level, msg });
    return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (more) => recording({ ...bindings, ...more }) };
  };
  const job = new LazyChildLogger(recording({ worker_id: 'w1' }), { job_id: 'job_1' });
  job.debug({ durationMs: 3 }, 'stage succeeded');
  job.child({ lock: 'k' }).warn('lock lost');
  assert.deepEqual(lines, [
    { worker_id: 'w1', job_id: 'job_1', durationMs: 3, level: 'debug', msg: 'stage succeeded' },
    { worker_id: 'w1', job_id: 'job_1', lock: 'k', level: 'warn', msg: 'lock lost' },
  ]);
});
