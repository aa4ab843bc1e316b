/**
 * What kiln logs for requests and runs: one info line per request (method, url, status, duration,
 * trace id), and expected outcomes (a run cancelled or superseded under a working handler) at info,
 * never warn.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Logger } from '../../src/core/logger.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { openHttpHarness, postJson } from './http-harness.ts';

interface Line {
  level: string;
  msg: string | undefined;
  [key: string]: unknown;
}

/** A core Logger that keeps every line with its bindings. */
function recordingLogger(lines: Line[], bindings: Record<string, unknown> = {}): Logger {
  const at =
    (level: string) =>
    (objOrMsg: Record<string, unknown> | string, msg?: string): void => {
      if (typeof objOrMsg === 'string') lines.push({ ...bindings, level, msg: objOrMsg });
      else lines.push({ ...bindings, ...objOrMsg, level, msg });
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (more) => recordingLogger(lines, { ...bindings, ...more }) };
}

test('every request logs exactly one info line: method, url, status, duration and trace id', async () => {
  const lines: Line[] = [];
  const h = await openHttpHarness(() => createMemoryStore(), { logger: recordingLogger(lines) });
  try {
    const res = await h.app.inject({ method: 'GET', url: '/v1/runs?limit=3' });
    assert.equal(res.statusCode, 200);
    const missing = await h.app.inject({ method: 'GET', url: '/v1/nope' });
    assert.equal(missing.statusCode, 404);
    const info = lines.filter((l) => l.level === 'info');
    assert.equal(info.length, 2, JSON.stringify(info));
    const [first, second] = info;
    assert.equal(first?.method, 'GET');
    assert.equal(first?.url, '/v1/runs?limit=3');
    assert.equal(first?.statusCode, 200);
    assert.equal(typeof first?.durationMs, 'number');
    assert.match(String(first?.trace_id), /^[0-9a-f]{32}$/);
    assert.equal(res.headers.traceparent?.toString().split('-')[1], first?.trace_id);
    assert.equal(second?.statusCode, 404);
  } finally {
    await h.close();
  }
});

test('a run cancelled or superseded under a working handler logs no warning', async () => {
  const lines: Line[] = [];
  const h = await openHttpHarness(() => createMemoryStore(), { kilnLogger: recordingLogger(lines) });
  try {
    h.worker.start();
    const cancelled = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 400 } });
    const cancelledId = cancelled.json<{ id: string }>().id;
    await h.waitForStatus(cancelledId, ['running']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await h.app.inject({ method: 'POST', url: `/v1/runs/${cancelledId}/cancel` })).statusCode, 200);

    const v1 = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 400 }, subjectId: 'doc', subjectVersion: 1 });
    const v1Id = v1.json<{ id: string }>().id;
    await h.waitForStatus(v1Id, ['running']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const v2 = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 10 }, subjectId: 'doc', subjectVersion: 2 });
    await h.waitForStatus(v1Id, ['superseded']);
    await h.waitForStatus(v2.json<{ id: string }>().id, ['succeeded']);
    // Let the abandoned handlers of both runs end and try to commit.
    await new Promise((resolve) => setTimeout(resolve, 800));
    const warnings = lines.filter((l) => l.level === 'warn' || l.level === 'error');
    assert.deepEqual(warnings, []);
    assert.ok(lines.some((l) => l.level === 'info' && (l.outcome === 'cancelled' || l.reason === 'cancelled')), JSON.stringify(lines.filter((l) => l.level === 'info')));
  } finally {
    await h.close();
  }
});
