/**
 * Traces in one process: the OpenTelemetry SDK as the CLI runtime sets it up (`startTracing`,
 * here with the SDK's in-memory exporter), the HTTP API and a worker on one store. A run whose
 * first stage fails once is ONE trace, from the client's `traceparent` through the server span,
 * `kiln.submit` and every attempt, with commit, cache and artifact spans under their attempt.
 * Without an SDK the run still stores the client's trace, and a response always names one.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import type { FastifyInstance } from 'fastify';
import { StageFailure } from '../../src/core/errors.ts';
import { silentLogger, type Logger } from '../../src/core/logger.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import type { Kiln } from '../../src/engine/kiln-types.ts';
import { createLogger } from '../../src/observe/logger.ts';
import { startTracing } from '../../src/observe/tracing.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { openHttpHarness } from './http-harness.ts';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/** `fetch` fails its first attempt (retryable), then caches an artifact it writes; `finish` passes. */
const flaky = definePipeline({
  name: 'trace.flaky',
  version: 1,
  stages: [
    {
      name: 'fetch',
      handler: async (ctx) => {
        if (ctx.attempt === 1) throw StageFailure.retryable('first attempt fails', { code: 'FLAKY' });
        const { value } = await ctx.cache.getOrBuild({ cache: 'trace-test', key: ctx.run.id, ttlMs: 60_000 }, async () => {
          const ref = await ctx.artifacts.put(new TextEncoder().encode(`bytes of ${ctx.run.id}`), { mediaType: 'text/plain' });
          return ref.ref;
        });
        return { ref: value };
      },
    },
    { name: 'finish', handler: () => ({ done: true }) },
  ],
  defaults: { maxAttempts: 3, backoff: { baseMs: 5, capMs: 10 } },
});

interface Rig {
  app: FastifyInstance;
  kiln: Kiln;
  close(): Promise<void>;
}

/** The API and a started worker over one SQLite store in a temp dir. */
async function openRig(logger?: Logger): Promise<Rig> {
  const h = await openHttpHarness((dir) => createSqliteStore({ path: join(dir, 'kiln.db') }), { pipelines: [flaky], ...(logger ? { logger } : {}) });
  h.worker.start();
  return h;
}

async function submitRun(app: FastifyInstance, headers: Record<string, string>): Promise<{ runId: string; traceparent: string }> {
  const res = await app.inject({ method: 'POST', url: '/v1/runs', payload: { pipeline: 'trace.flaky', input: {} }, headers });
  assert.equal(res.statusCode, 202, res.body);
  const traceparent = res.headers['traceparent'];
  assert.equal(typeof traceparent, 'string', 'the response carries traceparent');
  return { runId: res.json<{ id: string }>().id, traceparent: String(traceparent) };
}

const named = (spans: readonly ReadableSpan[], name: string): ReadableSpan[] => spans.filter((s) => s.name === name);
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe('traces with the SDK (in-memory exporter)', () => {
  test('a run that retried once is one trace: request, kiln.submit, every attempt, and their commit, cache and artifact spans', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = await startTracing({ env: {}, logger: silentLogger, version: 'test', exporter });
    const rig = await openRig();
    try {
      const { runId, traceparent } = await submitRun(rig.app, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
      const detail = await rig.kiln.waitForRun(runId, { timeoutMs: 10_000 });
      assert.equal(detail.run.status, 'succeeded');
      assert.equal(detail.stages[0]?.attempts, 2, 'fetch retried once');
      await tracing.flush();
      const spans = exporter.getFinishedSpans();

      assert.deepEqual([...new Set(spans.map((s) => s.spanContext().traceId))], [CLIENT_TRACE], 'one trace, the client\'s');
      const [server] = named(spans, 'POST /v1/runs');
      assert.ok(server, `a server span; got ${spans.map((s) => s.name).join(', ')}`);
      assert.equal(server.kind, SpanKind.SERVER);
      assert.equal(parentOf(server), CLIENT_SPAN);
      assert.equal(server.attributes['http.response.status_code'], 202);
      assert.equal(TRACEPARENT.exec(traceparent)?.[2], server.spanContext().spanId, 'the response names the server span');

      const [submit] = named(spans, 'kiln.submit');
      assert.ok(submit);
      assert.equal(parentOf(submit), server.spanContext().spanId);
      assert.equal(submit.attributes['kiln.run_id'], runId);
      assert.equal(detail.run.traceId, CLIENT_TRACE);
      assert.equal(detail.run.traceParent, `00-${CLIENT_TRACE}-${submit.spanContext().spanId}-01`, 'the run stores kiln.submit as its parent');

      const fetches = named(spans, 'trace.flaky.fetch').sort((a, b) => Number(a.attributes['kiln.attempt']) - Number(b.attributes['kiln.attempt']));
      const finishes = named(spans, 'trace.flaky.finish');
      assert.equal(fetches.length, 2, 'one span per attempt');
      assert.equal(finishes.length, 1);
      for (const attempt of [...fetches, ...finishes]) {
        assert.equal(attempt.kind, SpanKind.CONSUMER);
        assert.equal(parentOf(attempt), submit.spanContext().spanId, `${attempt.name} is a child of kiln.submit`);
        assert.equal(attempt.attributes['kiln.run_id'], runId);
        assert.match(String(attempt.attributes['kiln.job_id']), /^job_/);
        assert.equal(attempt.attributes['kiln.redelivered'], false);
        assert.equal(attempt.attributes['kiln.queue'], attempt.name);
      }
      assert.deepEqual(fetches.map((s) => [s.attributes['kiln.attempt'], s.attributes['kiln.outcome'], s.attributes['kiln.error.code'] ?? null]), [
        [1, 'retried', 'FLAKY'],
        [2, 'succeeded', null],
      ]);
      assert.equal(finishes[0]?.attributes['kiln.outcome'], 'succeeded');

      const children = (span: ReadableSpan | undefined): string[] => spans.filter((s) => parentOf(s) === span?.spanContext().spanId).map((s) => s.name).sort();
      assert.deepEqual(children(fetches[0]), ['kiln.commit']);
      assert.deepEqual(children(fetches[1]), ['kiln.cache', 'kiln.commit']);
      assert.deepEqual(children(named(spans, 'kiln.cache')[0]), ['kiln.artifact.put']);
      assert.equal(named(spans, 'kiln.cache')[0]?.attributes['kiln.cache.result'], 'miss');
      assert.deepEqual(named(spans, 'kiln.commit').map((s) => s.attributes['kiln.commit.outcome']), ['committed', 'committed', 'committed']);
    } finally {
      await rig.close();
      await tracing.shutdown();
    }
  });

  test('a request without traceparent starts a trace the response names and the run joins', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = await startTracing({ env: {}, logger: silentLogger, version: 'test', exporter });
    const rig = await openRig();
    try {
      const { runId, traceparent } = await submitRun(rig.app, {});
      const detail = await rig.kiln.waitForRun(runId, { timeoutMs: 10_000 });
      await tracing.flush();
      const traceId = TRACEPARENT.exec(traceparent)?.[1];
      assert.equal(detail.run.traceId, traceId);
      const spans = exporter.getFinishedSpans();
      assert.equal(parentOf(named(spans, 'POST /v1/runs')[0]!), undefined, 'the server span is the root');
      assert.ok(named(spans, 'trace.flaky.finish').every((s) => s.spanContext().traceId === traceId));
    } finally {
      await rig.close();
      await tracing.shutdown();
    }
  });
});

describe('traces without an SDK', () => {
  test('the run stores the client\'s trace, every response carries a traceparent and request logs its trace id', async () => {
    const stream = new PassThrough();
    let logged = '';
    stream.on('data', (chunk: Buffer) => (logged += chunk.toString()));
    const rig = await openRig(createLogger({ level: 'info', destination: stream, format: 'json' }));
    try {
      const { runId, traceparent } = await submitRun(rig.app, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
      assert.equal(traceparent, `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, 'no server span: the client\'s context is the request\'s');
      const detail = await rig.kiln.waitForRun(runId, { timeoutMs: 10_000 });
      assert.equal(detail.run.status, 'succeeded');
      assert.equal(detail.run.traceId, CLIENT_TRACE);
      assert.equal(detail.run.traceParent, traceparent);

      const fresh = await submitRun(rig.app, { traceparent: 'garbage' });
      const freshRun = await rig.kiln.getRun(fresh.runId);
      assert.equal(freshRun.run.traceId, TRACEPARENT.exec(fresh.traceparent)?.[1], 'an invalid header starts a new trace, named in the response');
      const health = await rig.app.inject({ method: 'GET', url: '/healthz' });
      assert.match(String(health.headers['traceparent']), TRACEPARENT);
      const completed = logged
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { msg?: string; trace_id?: string; req?: unknown; res?: unknown })
        .filter((l) => l.msg === 'request completed');
      // /healthz logs at warn only; the two submissions are logged with their traces.
      assert.deepEqual(completed.map((l) => l.trace_id), [CLIENT_TRACE, TRACEPARENT.exec(fresh.traceparent)?.[1]]);
    } finally {
      await rig.close();
    }
  });
});
