/**
 * Traces across processes: one API process (`kiln serve --no-worker`) and one worker process
 * (`kiln worker`) on one SQLite file, both exporting by OTLP/HTTP to a collector this test runs on
 * 127.0.0.1. A client's request is one trace: the API's server span and `kiln.submit`, and the
 * worker's attempt spans (children of `kiln.submit`, whose context the run stored) with theirs.
 * Without an OTLP endpoint nothing is sent.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startOtlpCollector, type CollectedSpan } from '../support/otlp-collector.ts';
import { cleanEnv, exitWithin, freePort, killIfRunning, spawnKiln, waitUntil, type KilnProcess } from './kiln-process.ts';

const E2E_TIMEOUT_MS = 60_000;
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
/** OTLP span kinds (1-based in the wire format). */
const SERVER = 2;
const CONSUMER = 5;

test('an API process and a worker process export their spans of one request under the client\'s trace id', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const collector = await startOtlpCollector();
  const dir = await mkdtemp(join(tmpdir(), 'kiln-otlp-'));
  const procs: KilnProcess[] = [];
  t.after(async () => {
    for (const p of procs) killIfRunning(p);
    await Promise.all(procs.map((p) => p.exited));
    await collector.close();
    await rm(dir, { recursive: true, force: true });
  });
  // Short batch delays, so spans arrive within the test; shutdown flushes the rest anyway.
  const env = cleanEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' });
  const db = join(dir, 'kiln.db');
  const port = await freePort();
  const api = spawnKiln(['serve', '--no-worker', '--port', String(port), '--db', db], dir, env);
  procs.push(api);
  const base = `http://127.0.0.1:${port}`;
  await waitUntil('the API to answer /healthz', async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 15_000, 100).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${api.output()}`);
  });
  const worker = spawnKiln(['worker', '--db', db, '--queues', 'demo.sleep.prepare,demo.sleep.process,demo.sleep.finish'], dir, env);
  procs.push(worker);

  const res = await fetch(`${base}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    body: JSON.stringify({ pipeline: 'demo.sleep', input: { delayMs: 5 } }),
  });
  assert.equal(res.status, 202);
  assert.match(String(res.headers.get('traceparent')), new RegExp(`^00-${CLIENT_TRACE}-[0-9a-f]{16}-01$`));
  const { id: runId } = (await res.json()) as { id: string };
  await waitUntil(
    'the run to succeed',
    async () => (((await (await fetch(`${base}/v1/runs/${runId}`)).json()) as { status: string }).status === 'succeeded' ? true : undefined),
    20_000,
    100,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}\n--- api ---\n${api.output()}\n--- worker ---\n${worker.output()}`);
  });

  const ofTrace = (): CollectedSpan[] => collector.spans().filter((s) => s.traceId === CLIENT_TRACE);
  const attemptNames = ['demo.sleep.prepare', 'demo.sleep.process', 'demo.sleep.finish'];
  await waitUntil('every span to reach the collector', async () => {
    const names = new Set(ofTrace().map((s) => s.name));
    return ['POST /v1/runs', 'kiln.submit', ...attemptNames].every((n) => names.has(n)) ? true : undefined;
  }, 15_000, 100).catch((err: unknown) => {
    throw new Error(`${String(err)}; got ${JSON.stringify(collector.spans().map((s) => [s.name, s.traceId]))}`);
  });

  const spans = ofTrace();
  const byName = (name: string): CollectedSpan[] => spans.filter((s) => s.name === name);
  const [server] = byName('POST /v1/runs');
  const [submit] = byName('kiln.submit');
  assert.ok(server && submit);
  assert.equal(server.kind, SERVER);
  assert.equal(server.parentSpanId, CLIENT_SPAN);
  assert.equal(submit.parentSpanId, server.spanId);
  for (const span of [server, submit]) assert.equal(span.resource['kiln.command'], 'serve', `${span.name} comes from the API process`);
  assert.equal(server.resource['service.name'], 'kiln');

  for (const name of attemptNames) {
    const [attempt, ...more] = byName(name);
    assert.ok(attempt, name);
    assert.equal(more.length, 0, `${name}: one attempt`);
    assert.equal(attempt.resource['kiln.command'], 'worker', `${name} comes from the worker process`);
    assert.notEqual(attempt.resource['process.pid'], server.resource['process.pid']);
    assert.equal(attempt.kind, CONSUMER);
    assert.equal(attempt.parentSpanId, submit.spanId, `${name} is a child of the API's kiln.submit`);
    assert.equal(attempt.attributes['kiln.run_id'], runId);
    assert.equal(attempt.attributes['kiln.outcome'], 'succeeded');
    assert.equal(attempt.attributes['kiln.attempt'], 1);
    const commits = spans.filter((s) => s.name === 'kiln.commit' && s.parentSpanId === attempt.spanId);
    assert.equal(commits.length, 1, `${name} has its commit span`);
  }
  assert.deepEqual(collector.rejected(), []);

  // Graceful stops flush what is left and exit 0.
  api.child.kill('SIGTERM');
  worker.child.kill('SIGTERM');
  assert.equal((await exitWithin(api, 'the API to stop', 15_000)).code, 0);
  assert.equal((await exitWithin(worker, 'the worker to stop', 15_000)).code, 0);
});

test('without an OTLP endpoint nothing is exported, and serve says where the API, dashboard and metrics are', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const collector = await startOtlpCollector();
  const dir = await mkdtemp(join(tmpdir(), 'kiln-otlp-off-'));
  const port = await freePort();
  // The collector's address is in the environment, but under no name the exporter reads.
  const serve = spawnKiln(['serve', '--port', String(port), '--db', join(dir, 'kiln.db')], dir, cleanEnv({ UNRELATED_ENDPOINT: collector.endpoint }));
  t.after(async () => {
    killIfRunning(serve);
    await serve.exited;
    await collector.close();
    await rm(dir, { recursive: true, force: true });
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntil('/healthz', async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 15_000, 100);
  const res = await fetch(`${base}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pipeline: 'demo.sleep', input: { delayMs: 1 } }),
  });
  assert.equal(res.status, 202);
  serve.child.kill('SIGTERM');
  await exitWithin(serve, 'serve to stop', 15_000);
  assert.deepEqual(collector.spans(), []);
  const started = serve
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => String(l['msg']).startsWith('kiln serving on'));
  assert.ok(started, serve.output());
  assert.deepEqual([started['api'], started['dashboard'], started['metrics'], started['traces']], [`${base}/v1`, `${base}/dashboard`, `${base}/metrics`, 'off']);
});
