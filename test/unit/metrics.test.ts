import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { QueueStats } from '../../src/core/model.ts';
import { MAX_TENANT_LABELS } from '../../src/observe/engine-metrics.ts';
import { createMetrics } from '../../src/observe/metrics.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Exposition {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const VALUE = '(?:[-+]?(?:[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?)|[-+]?Inf|NaN)';
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?,?\\})? (${VALUE})(?: -?[0-9]+)?$`);
const HELP_LINE = new RegExp(`^# HELP (${NAME}) (.+)$`);
const TYPE_LINE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);

/**
 * Parses Prometheus text format strictly enough to catch a malformed exposition: every line is
 * HELP, TYPE, a sample or empty; every sample belongs to a family declared by TYPE before it.
 */
function parseExposition(text: string): Exposition {
  const out: Exposition = { types: new Map(), help: new Map(), samples: [] };
  const lines = text.split('\n');
  assert.equal(lines.at(-1), '', 'exposition ends with a newline');
  for (const line of lines.slice(0, -1)) {
    if (line === '') continue;
    const help = HELP_LINE.exec(line);
    const type = TYPE_LINE.exec(line);
    if (help) {
      out.help.set(help[1]!, help[2]!);
      continue;
    }
    if (type) {
      assert.ok(out.help.has(type[1]!), `TYPE of ${type[1]} follows its HELP`);
      out.types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = SAMPLE_LINE.exec(line);
    assert.ok(sample, `not a valid exposition line: ${JSON.stringify(line)}`);
    const name = sample[1]!;
    const family = [name, name.replace(/_(bucket|sum|count)$/, '')].find((n) => out.types.has(n));
    assert.ok(family, `sample ${name} has no TYPE before it`);
    const labels: Record<string, string> = {};
    for (const m of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    out.samples.push({ name, labels, value: Number(sample[3]!.replace('Inf', 'Infinity')) });
  }
  return out;
}

function find(exp: Exposition, name: string, labels: Record<string, string>): number | undefined {
  return exp.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length)?.value;
}

const stats = (queue: string, overrides: Partial<QueueStats> = {}): QueueStats => ({
  queue,
  paused: false,
  ready: 0,
  scheduled: 0,
  leased: 0,
  parked: 0,
  dead: 0,
  oldestReadyAgeMs: 0,
  ...overrides,
});

describe('metrics', () => {
  test('render() is valid Prometheus text with kiln and default process metrics, each with HELP', async () => {
    const metrics = createMetrics({ queueStats: async () => [stats('demo.a', { ready: 2 })], lockStats: async () => ({ held: 1, expired: 0, oldestHeldAgeMs: 10 }) });
    metrics.observer.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'succeeded', durationMs: 12, rollback: false });
    const exp = parseExposition(await metrics.render());
    assert.match(metrics.contentType, /^text\/plain; version=0\.0\.4/);
    assert.equal(exp.types.get('process_cpu_user_seconds_total'), 'counter');
    const expected: Record<string, string> = {
      kiln_stage_executions_total: 'counter',
      kiln_stage_duration_seconds: 'histogram',
      kiln_stage_retries_total: 'counter',
      kiln_idempotent_skips_total: 'counter',
      kiln_redeliveries_total: 'counter',
      kiln_handlers_abandoned_total: 'counter',
      kiln_queue_jobs: 'gauge',
      kiln_queue_oldest_ready_age_seconds: 'gauge',
      kiln_queue_paused: 'gauge',
      kiln_runs_total: 'counter',
      kiln_lock_waits_total: 'counter',
      kiln_lock_wait_seconds: 'histogram',
      kiln_stale_locks_reaped_total: 'counter',
      kiln_locks: 'gauge',
      kiln_lock_oldest_held_age_seconds: 'gauge',
    };
    for (const [name, type] of Object.entries(expected)) {
      assert.equal(exp.types.get(name), type, name);
      assert.ok((exp.help.get(name) ?? '').length > 20, `${name} has a meaningful HELP`);
    }
  });

  test('observer events become samples with the documented names and labels', async () => {
    const metrics = createMetrics();
    const o = metrics.observer;
    o.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'succeeded', durationMs: 3, rollback: false });
    o.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'succeeded', durationMs: 2_500, rollback: false });
    o.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'retried', durationMs: 1, errorClass: 'intervention', rollback: false });
    o.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'retried', durationMs: 1, rollback: false });
    o.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'succeeded', durationMs: 5, rollback: true });
    o.idempotentSkip('demo', 'b');
    o.redelivered('demo.a', 3);
    o.redelivered('demo.a', 0);
    o.runStatus('demo', 'queued');
    o.runStatus('demo', 'succeeded');
    o.handlerAbandoned('demo', 'a');
    const exp = parseExposition(await metrics.render());

    assert.equal(find(exp, 'kiln_stage_executions_total', { pipeline: 'demo', stage: 'a', outcome: 'succeeded' }), 2);
    assert.equal(find(exp, 'kiln_stage_executions_total', { pipeline: 'demo', stage: 'a', outcome: 'retried' }), 2);
    assert.equal(find(exp, 'kiln_stage_executions_total', { pipeline: 'demo', stage: 'a:rollback', outcome: 'succeeded' }), 1);
    assert.equal(find(exp, 'kiln_stage_retries_total', { pipeline: 'demo', stage: 'a', error_class: 'intervention' }), 1);
    assert.equal(find(exp, 'kiln_stage_retries_total', { pipeline: 'demo', stage: 'a', error_class: 'transient' }), 1);
    assert.equal(find(exp, 'kiln_idempotent_skips_total', { pipeline: 'demo', stage: 'b' }), 1);
    assert.equal(find(exp, 'kiln_redeliveries_total', { queue: 'demo.a' }), 3);
    assert.equal(find(exp, 'kiln_runs_total', { pipeline: 'demo', status: 'queued', tenant: '' }), 1);
    assert.equal(find(exp, 'kiln_runs_total', { pipeline: 'demo', status: 'succeeded', tenant: '' }), 1);
    assert.equal(find(exp, 'kiln_handlers_abandoned_total', { pipeline: 'demo', stage: 'a' }), 1);

    const bucket = (le: string) => find(exp, 'kiln_stage_duration_seconds_bucket', { pipeline: 'demo', stage: 'a', le });
    assert.equal(bucket('0.001'), 2); // the two 1 ms retries
    assert.equal(bucket('0.005'), 3);
    assert.equal(bucket('2.5'), 4);
    assert.equal(bucket('60'), 4);
    assert.equal(bucket('+Inf'), 4);
    assert.equal(find(exp, 'kiln_stage_duration_seconds_count', { pipeline: 'demo', stage: 'a' }), 4);
    assert.equal(find(exp, 'kiln_stage_duration_seconds_sum', { pipeline: 'demo', stage: 'a' }), 2.505);
    assert.equal(find(exp, 'kiln_stage_duration_seconds_count', { pipeline: 'demo', stage: 'a:rollback' }), 1);
  });

  test('the events of issue 10 feed latency, run duration, claims, acks, attempts, timeouts, losses, failures, dedup hits and publications', async () => {
    const metrics = createMetrics();
    const o = metrics.observer;
    o.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'succeeded', durationMs: 3, rollback: false, attempt: 2, sinceEnqueuedMs: 1_500 });
    o.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'retried', durationMs: 3, rollback: false, attempt: 1, sinceEnqueuedMs: 20 });
    o.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'lease_lost', durationMs: 3, rollback: false, attempt: 1 });
    o.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'dead_lettered', durationMs: 3, rollback: true, attempt: 3, sinceEnqueuedMs: 5 });
    o.runFinished('demo', 'succeeded', 2_000);
    o.submitDeduplicated('demo', 2);
    o.jobsClaimed('demo.a', 3);
    o.stageTimedOut('demo', 'a');
    o.heartbeatLost('demo.a');
    o.artifactWriteFailed();
    o.publicationsRequested('demo', ['thumb', 'preview', 'thumb']);
    const exp = parseExposition(await metrics.render());

    assert.equal(find(exp, 'kiln_stage_latency_seconds_count', { pipeline: 'demo', stage: 'a' }), 1, 'only successes are enqueue-to-done');
    assert.equal(find(exp, 'kiln_stage_latency_seconds_sum', { pipeline: 'demo', stage: 'a' }), 1.5);
    assert.equal(find(exp, 'kiln_stage_attempts_before_success_bucket', { pipeline: 'demo', stage: 'a', le: '1' }), 0);
    assert.equal(find(exp, 'kiln_stage_attempts_before_success_bucket', { pipeline: 'demo', stage: 'a', le: '2' }), 1);
    assert.equal(find(exp, 'kiln_jobs_acked_total', { queue: 'demo.a' }), 3, 'committed outcomes, rollbacks included; lease_lost is no ack');
    assert.equal(find(exp, 'kiln_jobs_claimed_total', { queue: 'demo.a' }), 3);
    assert.equal(find(exp, 'kiln_rollback_failures_total', { pipeline: 'demo', stage: 'a' }), 1);
    assert.equal(find(exp, 'kiln_run_duration_seconds_sum', { pipeline: 'demo', status: 'succeeded' }), 2);
    assert.equal(find(exp, 'kiln_submit_dedup_hits_total', { pipeline: 'demo' }), 2);
    assert.equal(find(exp, 'kiln_stage_timeouts_total', { pipeline: 'demo', stage: 'a' }), 1);
    assert.equal(find(exp, 'kiln_heartbeat_losses_total', { queue: 'demo.a' }), 1);
    assert.equal(find(exp, 'kiln_artifact_commit_failures_total', {}), 1);
    assert.equal(find(exp, 'kiln_publish_requests_total', { pipeline: 'demo', profile: 'thumb' }), 2);
    assert.equal(find(exp, 'kiln_publish_requests_total', { pipeline: 'demo', profile: 'preview' }), 1);
  });

  test('tenants label kiln_runs_total up to a bound; later tenants count as other', async () => {
    const metrics = createMetrics();
    for (let i = 0; i < MAX_TENANT_LABELS + 5; i++) metrics.observer.runStatus('demo', 'queued', `tenant-${i}`);
    metrics.observer.runStatus('demo', 'queued', 'tenant-0');
    metrics.observer.runStatus('demo', 'queued', null);
    const exp = parseExposition(await metrics.render());
    const tenants = new Set(exp.samples.filter((s) => s.name === 'kiln_runs_total').map((s) => s.labels['tenant']));
    assert.equal(tenants.size, MAX_TENANT_LABELS + 2, 'the bounded tenants, "other" and none');
    assert.equal(find(exp, 'kiln_runs_total', { pipeline: 'demo', status: 'queued', tenant: 'tenant-0' }), 2);
    assert.equal(find(exp, 'kiln_runs_total', { pipeline: 'demo', status: 'queued', tenant: 'other' }), 5);
    assert.equal(find(exp, 'kiln_runs_total', { pipeline: 'demo', status: 'queued', tenant: '' }), 1);
  });

  test('declared pipelines have zero series for every stage, queue and outcome before any event', async () => {
    const metrics = createMetrics();
    metrics.declarePipelines([{ name: 'demo.two', stages: [{ name: 'a' }, { name: 'b', rollback: () => null }] }]);
    const exp = parseExposition(await metrics.render());
    for (const outcome of ['succeeded', 'retried', 'dead_lettered', 'failed', 'parked', 'lease_lost', 'cancelled']) {
      assert.equal(find(exp, 'kiln_stage_executions_total', { pipeline: 'demo.two', stage: 'a', outcome }), 0, outcome);
      assert.equal(find(exp, 'kiln_stage_executions_total', { pipeline: 'demo.two', stage: 'b:rollback', outcome }), 0, outcome);
    }
    assert.equal(find(exp, 'kiln_stage_executions_total', { pipeline: 'demo.two', stage: 'a:rollback', outcome: 'succeeded' }), undefined, 'a has no rollback');
    assert.equal(find(exp, 'kiln_rollback_failures_total', { pipeline: 'demo.two', stage: 'b' }), 0);
    for (const name of ['kiln_jobs_claimed_total', 'kiln_jobs_acked_total', 'kiln_redeliveries_total', 'kiln_heartbeat_losses_total']) {
      assert.equal(find(exp, name, { queue: 'demo.two.b' }), 0, name);
    }
    assert.equal(find(exp, 'kiln_stage_latency_seconds_count', { pipeline: 'demo.two', stage: 'a' }), 0);
    assert.equal(find(exp, 'kiln_run_duration_seconds_count', { pipeline: 'demo.two', status: 'dead_lettered' }), 0);
    assert.equal(find(exp, 'kiln_runs_total', { pipeline: 'demo.two', status: 'parked', tenant: '' }), 0);
    assert.equal(find(exp, 'kiln_submit_dedup_hits_total', { pipeline: 'demo.two' }), 0);
  });

  test('store gauges: kiln_store_up follows the queue stats read, parked runs are summed per pipeline', async () => {
    let down = false;
    const metrics = createMetrics({
      storeName: 'sqlite',
      queueStats: async () => {
        if (down) throw new Error('store down');
        return [stats('demo.two.a', { parked: 2 }), stats('demo.two.b', { parked: 1 }), stats('other.a')];
      },
    });
    let exp = parseExposition(await metrics.render());
    assert.equal(find(exp, 'kiln_store_up', { store: 'sqlite' }), 1);
    assert.equal(find(exp, 'kiln_runs_parked', { pipeline: 'demo.two' }), 3);
    assert.equal(find(exp, 'kiln_runs_parked', { pipeline: 'other' }), 0);
    down = true;
    exp = parseExposition(await metrics.render());
    assert.equal(find(exp, 'kiln_store_up', { store: 'sqlite' }), 0);
    assert.equal(find(exp, 'kiln_runs_parked', { pipeline: 'demo.two' }), undefined);
    assert.equal(parseExposition(await createMetrics().render()).samples.filter((x) => x.name === 'kiln_store_up').length, 0, 'no store, no gauge');
  });

  test("worker gauges report the worker's busy slots, slots and utilization per queue", async () => {
    const metrics = createMetrics();
    assert.equal(find(parseExposition(await metrics.render()), 'kiln_worker_slots', { queue: 'demo.a' }), undefined, 'no worker, no gauge');
    metrics.setWorkerSlots(() => [{ queue: 'demo.a', busy: 3, slots: 4 }, { queue: 'demo.b', busy: 0, slots: 0 }]);
    const exp = parseExposition(await metrics.render());
    assert.equal(find(exp, 'kiln_worker_slots', { queue: 'demo.a' }), 4);
    assert.equal(find(exp, 'kiln_worker_busy_slots', { queue: 'demo.a' }), 3);
    assert.equal(find(exp, 'kiln_worker_utilization', { queue: 'demo.a' }), 0.75);
    assert.equal(find(exp, 'kiln_worker_utilization', { queue: 'demo.b' }), 0);
  });

  test('queue gauges are read at scrape time, once per scrape, and vanished queues disappear', async () => {
    let calls = 0;
    let current = [stats('demo.a', { ready: 4, scheduled: 1, leased: 2, parked: 1, dead: 3, oldestReadyAgeMs: 1_500 }), stats('demo.b', { paused: true })];
    const metrics = createMetrics();
    metrics.setQueueStats(async () => {
      calls += 1;
      return current;
    });
    let exp = parseExposition(await metrics.render());
    assert.equal(calls, 1);
    for (const [state, n] of Object.entries({ ready: 4, scheduled: 1, leased: 2, parked: 1, dead: 3 })) {
      assert.equal(find(exp, 'kiln_queue_jobs', { queue: 'demo.a', state }), n, state);
    }
    assert.equal(find(exp, 'kiln_queue_oldest_ready_age_seconds', { queue: 'demo.a' }), 1.5);
    assert.equal(find(exp, 'kiln_queue_paused', { queue: 'demo.a' }), 0);
    assert.equal(find(exp, 'kiln_queue_paused', { queue: 'demo.b' }), 1);

    current = [stats('demo.b', { ready: 1 })];
    exp = parseExposition(await metrics.render());
    assert.equal(calls, 2);
    assert.equal(find(exp, 'kiln_queue_jobs', { queue: 'demo.a', state: 'ready' }), undefined);
    assert.equal(find(exp, 'kiln_queue_jobs', { queue: 'demo.b', state: 'ready' }), 1);
  });

  test('lock events and lock gauges: waits, wait time, stale locks reaped, held locks and the oldest held age', async () => {
    let current = { held: 2, expired: 1, oldestHeldAgeMs: 4_500 };
    const metrics = createMetrics({ lockStats: async () => current });
    const o = metrics.observer;
    o.lockWaited('demo', 'render');
    o.lockWaited('demo', 'render');
    o.lockAcquired('demo', 'render', 0);
    o.lockAcquired('demo', 'render', 1_200);
    o.staleLocksReaped(3);
    o.staleLocksReaped(0);
    let exp = parseExposition(await metrics.render());
    assert.equal(find(exp, 'kiln_lock_waits_total', { pipeline: 'demo', stage: 'render' }), 2);
    assert.equal(find(exp, 'kiln_lock_wait_seconds_bucket', { pipeline: 'demo', stage: 'render', le: '0' }), 1);
    assert.equal(find(exp, 'kiln_lock_wait_seconds_bucket', { pipeline: 'demo', stage: 'render', le: '2.5' }), 2);
    assert.equal(find(exp, 'kiln_lock_wait_seconds_sum', { pipeline: 'demo', stage: 'render' }), 1.2);
    assert.equal(find(exp, 'kiln_stale_locks_reaped_total', {}), 3);
    assert.equal(find(exp, 'kiln_locks', { state: 'held' }), 2);
    assert.equal(find(exp, 'kiln_locks', { state: 'expired' }), 1);
    assert.equal(find(exp, 'kiln_lock_oldest_held_age_seconds', {}), 4.5);
    current = { held: 0, expired: 0, oldestHeldAgeMs: 0 };
    exp = parseExposition(await metrics.render());
    assert.equal(find(exp, 'kiln_lock_oldest_held_age_seconds', {}), 0);
    metrics.setLockStats(async () => {
      throw new Error('store down');
    });
    exp = parseExposition(await metrics.render());
    assert.equal(find(exp, 'kiln_locks', { state: 'held' }), undefined, 'an unreadable store leaves the lock gauges empty');
  });

  test('a failing queue stats source leaves the queue gauges empty and is counted, the scrape still succeeds', async () => {
    const metrics = createMetrics({
      queueStats: async () => {
        throw new Error('store down');
      },
    });
    const exp = parseExposition(await metrics.render());
    assert.equal(exp.samples.filter((s) => s.name.startsWith('kiln_queue_') && s.name !== 'kiln_queue_stats_errors_total').length, 0);
    assert.equal(find(exp, 'kiln_queue_stats_errors_total', {}), 1);
  });

  test('two metrics instances in one process keep separate registries', async () => {
    const first = createMetrics();
    const second = createMetrics();
    first.observer.runStatus('demo', 'queued');
    assert.notEqual(first.registry, second.registry);
    assert.equal(find(parseExposition(await first.render()), 'kiln_runs_total', { pipeline: 'demo', status: 'queued', tenant: '' }), 1);
    assert.equal(find(parseExposition(await second.render()), 'kiln_runs_total', { pipeline: 'demo', status: 'queued', tenant: '' }), undefined);
  });

  test('the observer never throws, even on nonsense input', () => {
    const metrics = createMetrics();
    assert.doesNotThrow(() => {
      metrics.observer.stageExecuted({ pipeline: 'demo', stage: 'a', outcome: 'succeeded', durationMs: Number.NaN, rollback: false });
      metrics.observer.redelivered('q', -1);
      metrics.observer.stageExecuted(undefined as never);
    });
  });
});

describe('exposition lint', () => {
  test('only counters end in _total, as Prometheus naming (and promtool) require', async () => {
    const metrics = createMetrics({ queueStats: async () => [] });
    const { types } = parseExposition(await metrics.render());
    const offenders = [...types].filter(([name, type]) => name.endsWith('_total') && type !== 'counter').map(([name]) => name);
    assert.deepEqual(offenders, []);
  });

  test('promtool check metrics accepts the exposition (when promtool is installed)', async (t) => {
    const { spawnSync } = await import('node:child_process');
    if (spawnSync('promtool', ['--version']).error) {
      t.skip('promtool not installed (apt-get install prometheus)');
      return;
    }
    const metrics = createMetrics({
      queueStats: async () => [{ queue: 'p.s', paused: true, ready: 2, scheduled: 1, leased: 1, parked: 0, dead: 3, oldestReadyAgeMs: 1500 }],
      lockStats: async () => ({ held: 1, expired: 1, oldestHeldAgeMs: 2_000 }),
    });
    metrics.observer.stageExecuted({ pipeline: 'p', stage: 's', outcome: 'retried', durationMs: 12, rollback: false, errorClass: 'transient' });
    metrics.observer.lockWaited('p', 's');
    metrics.observer.lockAcquired('p', 's', 250);
    metrics.observer.staleLocksReaped(1);
    metrics.observer.redelivered('p.s', 2);
    metrics.declarePipelines([{ name: 'p', stages: [{ name: 's', rollback: () => null }] }]);
    metrics.setWorkerSlots(() => [{ queue: 'p.s', busy: 1, slots: 2 }]);
    metrics.observer.runStatus('p', 'queued', 'acme');
    metrics.observer.publicationsRequested('p', ['thumb']);
    metrics.observer.cacheRequest('c', 'hit');
    metrics.observer.cacheBuild('c');
    metrics.observer.artifactWriteFailed();
    const result = spawnSync('promtool', ['check', 'metrics'], { input: await metrics.render(), encoding: 'utf8' });
    assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
  });
});
