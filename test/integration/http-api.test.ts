/**
 * The HTTP API end to end over a real store and a real worker, driven with `app.inject()`.
 * `describeHttp` holds every case so each store runs the same suite.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { httpStoreCases, type HttpStoreCase } from './http-stores.ts';
import { openHttpHarness, postJson, type StoreFactory, type HttpHarness, type RunJson } from './http-harness.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Runs `fn` against a fresh harness and always closes it. */
async function withHarness(createStore: StoreFactory, fn: (h: HttpHarness) => Promise<void>): Promise<void> {
  const h = await openHttpHarness(createStore);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

async function submit(h: HttpHarness, input: unknown, headers: Record<string, string> = {}): Promise<RunJson> {
  const res = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input }, headers);
  assert.equal(res.statusCode, 202, res.body);
  return res.json<RunJson>();
}

function describeHttp({ name, skip, create: createStore }: HttpStoreCase): void {
  describe(`HTTP API on the ${name} store`, { skip }, () => {
    test('a demo.sleep run submitted over HTTP succeeds with a three-stage timeline', () =>
      withHarness(createStore, async (h) => {
        h.worker.start();
        const res = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 5 } });
        assert.equal(res.statusCode, 202);
        const created = res.json<RunJson>();
        assert.equal(created.pipeline, 'demo.sleep');
        assert.match(created.status, /^(queued|running)$/);
        assert.equal(res.headers.location, `/v1/runs/${created.id}`);
        assert.match(String(created.createdAt), ISO);

        const run = await h.waitForStatus(created.id, ['succeeded', 'dead_lettered', 'failed']);
        assert.equal(run.status, 'succeeded');
        assert.deepEqual(
          run.stages.map((s) => [s.stage, s.status, s.attempts]),
          [
            ['prepare', 'succeeded', 1],
            ['process', 'succeeded', 1],
            ['finish', 'succeeded', 1],
          ],
        );
        for (const s of run.stages) {
          assert.match(String(s.startedAt), ISO);
          assert.equal(typeof s.durationMs, 'number');
        }
        assert.match(String(run.finishedAt), ISO);
      }));

    test('GET /v1/runs lists runs newest first and filters by status, pipeline and subject', () =>
      withHarness(createStore, async (h) => {
        const first = await submit(h, { delayMs: 0 });
        const second = await submit(h, { delayMs: 0 });
        const all = (await h.app.inject({ method: 'GET', url: '/v1/runs?limit=10' })).json<RunJson[]>();
        assert.deepEqual(
          all.map((r) => r.id),
          [second.id, first.id],
        );
        const ofSubject = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 0 }, subjectId: 'asset_1', subjectVersion: 1 });
        assert.equal(ofSubject.statusCode, 202, ofSubject.body);
        const bySubject = (await h.app.inject({ method: 'GET', url: '/v1/runs?subjectId=asset_1' })).json<RunJson[]>();
        assert.deepEqual(
          bySubject.map((r) => r.id),
          [ofSubject.json<RunJson>().id],
        );
        const page = (await h.app.inject({ method: 'GET', url: `/v1/runs?limit=10&before=${second.id}` })).json<RunJson[]>();
        assert.deepEqual(
          page.map((r) => r.id),
          [first.id],
        );
        const queued = (await h.app.inject({ method: 'GET', url: '/v1/runs?status=queued&pipeline=demo.sleep' })).json<RunJson[]>();
        assert.equal(queued.length, 3);
        const none = (await h.app.inject({ method: 'GET', url: '/v1/runs?status=succeeded' })).json<RunJson[]>();
        assert.equal(none.length, 0);
        const bad = await h.app.inject({ method: 'GET', url: '/v1/runs?status=bogus' });
        assert.equal(bad.statusCode, 400);
        assert.equal(bad.json().code, 'VALIDATION_FAILED');
        assert.match(bad.json().message, /querystring\.status/);
      }));

    test('a repeated Idempotency-Key returns the first run with 200 and Idempotent-Replayed', () =>
      withHarness(createStore, async (h) => {
        const headers = { 'idempotency-key': 'order-42' };
        const first = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 1 } }, headers);
        assert.equal(first.statusCode, 202);
        assert.equal(first.headers['idempotent-replayed'], undefined);
        const again = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 1 } }, headers);
        assert.equal(again.statusCode, 200);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        assert.equal(again.json().id, first.json().id);
        assert.equal(again.headers.location, first.headers.location);
        const runs = (await h.app.inject({ method: 'GET', url: '/v1/runs' })).json<RunJson[]>();
        assert.equal(runs.length, 1);
      }));

    test('the same Idempotency-Key with a different body is rejected with 422 IDEMPOTENCY_KEY_REUSED', () =>
      withHarness(createStore, async (h) => {
        const headers = { 'idempotency-key': 'order-43' };
        await submit(h, { delayMs: 1 }, headers);
        const res = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 2 } }, headers);
        assert.equal(res.statusCode, 422);
        assert.equal(res.json().code, 'IDEMPOTENCY_KEY_REUSED');
        assert.equal(res.json().statusCode, 422);
      }));

    test('an Idempotency-Key longer than 255 characters is a validation error', () =>
      withHarness(createStore, async (h) => {
        const res = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: {} }, { 'idempotency-key': 'k'.repeat(256) });
        assert.equal(res.statusCode, 400);
        assert.equal(res.json().code, 'VALIDATION_FAILED');
        assert.match(res.json().message, /headers\.idempotency-key/);
      }));

    test('an unknown pipeline is 404 UNKNOWN_PIPELINE and a bad pipeline input is 400 VALIDATION_FAILED', () =>
      withHarness(createStore, async (h) => {
        const unknown = await postJson(h.app, '/v1/runs', { pipeline: 'no.such', input: {} });
        assert.equal(unknown.statusCode, 404);
        assert.equal(unknown.json().code, 'UNKNOWN_PIPELINE');
        assert.equal(unknown.json().error, 'Not Found');
        const badInput = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: -1 } });
        assert.equal(badInput.statusCode, 400);
        assert.equal(badInput.json().code, 'VALIDATION_FAILED');
        assert.match(badInput.json().message, /delayMs/);
      }));

    test('an unknown run or job id is 404 NOT_FOUND', () =>
      withHarness(createStore, async (h) => {
        for (const url of ['/v1/runs/run_nope', '/v1/jobs/job_nope']) {
          const res = await h.app.inject({ method: 'GET', url });
          assert.equal(res.statusCode, 404, url);
          assert.equal(res.json().code, 'NOT_FOUND');
        }
        const cancel = await h.app.inject({ method: 'POST', url: '/v1/runs/run_nope/cancel' });
        assert.equal(cancel.statusCode, 404);
      }));

    test('cancel ends a queued run and a second cancel is 409 INVALID_TRANSITION', () =>
      withHarness(createStore, async (h) => {
        const run = await submit(h, { delayMs: 0 });
        const res = await postJson(h.app, `/v1/runs/${run.id}/cancel`, { reason: 'not needed' });
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().status, 'cancelled');
        assert.equal(res.json().error.message, 'not needed');
        const detail = (await h.app.inject({ method: 'GET', url: `/v1/runs/${run.id}` })).json<RunJson>();
        assert.deepEqual(
          detail.stages.map((s) => s.status),
          ['skipped', 'skipped', 'skipped'],
        );
        // A bare POST (no body, no Content-Type) is accepted too.
        const again = await h.app.inject({ method: 'POST', url: `/v1/runs/${run.id}/cancel` });
        assert.equal(again.statusCode, 409);
        assert.equal(again.json().code, 'INVALID_TRANSITION');
      }));

    test('resume continues a parked run; resuming a run that is not parked is 409 INVALID_TRANSITION', () =>
      withHarness(createStore, async (h) => {
        h.worker.start();
        const run = await submit(h, { delayMs: 0, failAt: 'process', failWith: 'intervention' });
        const parked = await h.waitForStatus(run.id, ['parked']);
        assert.deepEqual(
          parked.stages.map((s) => s.status),
          ['succeeded', 'failed', 'pending'],
        );
        const res = await h.app.inject({ method: 'POST', url: `/v1/runs/${run.id}/resume` });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().status, 'running');
        // The demo fails the same way again, so the run parks again, with the stage tried twice.
        const reparked = await h.waitForStatus(run.id, ['parked']);
        assert.equal(reparked.stages[1]?.attempts, 2);

        const other = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input: { delayMs: 0 } });
        await h.waitForStatus(other.json().id, ['succeeded']);
        const conflict = await h.app.inject({ method: 'POST', url: `/v1/runs/${other.json().id}/resume` });
        assert.equal(conflict.statusCode, 409);
        assert.equal(conflict.json().code, 'INVALID_TRANSITION');
      }));

    test('replay makes a dead-lettered job ready again; replaying a live job or the job of a failed run is 409 INVALID_TRANSITION', () =>
      withHarness(createStore, async (h) => {
        const live = await submit(h, { delayMs: 0 });
        const liveJobs = (await h.app.inject({ method: 'GET', url: `/v1/jobs?runId=${live.id}` })).json<{ id: string; state: string }[]>();
        assert.equal(liveJobs.length, 1);
        const conflict = await h.app.inject({ method: 'POST', url: `/v1/jobs/${liveJobs[0]?.id}/replay` });
        assert.equal(conflict.statusCode, 409);
        assert.equal(conflict.json().code, 'INVALID_TRANSITION');
        await h.app.inject({ method: 'POST', url: `/v1/runs/${live.id}/cancel` });

        h.worker.start();
        // A permanent failure ends the run failed; its dead job is kept but cannot be replayed.
        const bad = await submit(h, { delayMs: 0, failAt: 'prepare', failWith: 'permanent' });
        const failed = await h.waitForStatus(bad.id, ['failed', 'dead_lettered']);
        assert.equal(failed.status, 'failed');
        assert.equal(failed.error?.code, 'DEMO_FAILURE');
        assert.equal(failed.stages[0]?.status, 'failed');
        const [kept] = (await h.app.inject({ method: 'GET', url: `/v1/jobs?runId=${bad.id}&state=dead` })).json<{ id: string }[]>();
        const refused = await h.app.inject({ method: 'POST', url: `/v1/jobs/${kept?.id}/replay` });
        assert.equal(refused.statusCode, 409);
        assert.equal(refused.json().code, 'INVALID_TRANSITION');

        // Attempts that ran out on a retryable failure dead-letter the run: replayable.
        const run = await submit(h, { delayMs: 0, failAt: 'prepare', failWith: 'retryable' });
        const dead = await h.waitForStatus(run.id, ['dead_lettered', 'failed']);
        assert.equal(dead.status, 'dead_lettered');
        assert.equal(dead.error?.code, 'DEMO_FAILURE');
        // Dead-lettered is where the run stopped: it says when.
        assert.match(String(dead.finishedAt), ISO);
        const jobs = (await h.app.inject({ method: 'GET', url: `/v1/jobs?runId=${run.id}&state=dead` })).json<{ id: string; leaseToken?: string }[]>();
        assert.equal(jobs.length, 1);
        const jobId = jobs[0]?.id ?? '';
        assert.equal('leaseToken' in (jobs[0] ?? {}), false, 'lease tokens are never exposed');
        const res = await h.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/replay` });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().id, jobId);
        assert.equal(res.json().state, 'ready');
        assert.equal(res.json().attempt, 0);
        // Replayed, it runs out of attempts again: dead-lettered a second time, nothing lost.
        const again = await h.waitForStatus(run.id, ['dead_lettered'], 10_000);
        assert.equal(again.stages[0]?.attempts, 4);
        assert.match(String(again.finishedAt), ISO);
      }));

    test('/metrics exposes kiln_stage_executions_total after a run, and /healthz answers ok', () =>
      withHarness(createStore, async (h) => {
        h.worker.start();
        const run = await submit(h, { delayMs: 0 });
        await h.waitForStatus(run.id, ['succeeded']);
        const res = await h.app.inject({ method: 'GET', url: '/metrics' });
        assert.equal(res.statusCode, 200);
        assert.match(String(res.headers['content-type']), /^text\/plain/);
        assert.match(res.body, /kiln_stage_executions_total\{pipeline="demo.sleep",stage="process",outcome="succeeded"\} 1/);
        assert.match(res.body, /kiln_queue_jobs\{queue="demo.sleep.prepare",state="ready"\} 0/);
        const health = await h.app.inject({ method: 'GET', url: '/healthz' });
        assert.equal(health.statusCode, 200);
        assert.equal(health.json().status, 'ok');
        assert.match(health.json().time, ISO);
      }));

    test('queues can be paused, resumed and drained, and GET /v1/queues shows depth', () =>
      withHarness(createStore, async (h) => {
        const paused = await h.app.inject({ method: 'POST', url: '/v1/queues/demo.sleep.prepare/pause' });
        assert.equal(paused.statusCode, 200);
        assert.equal(paused.json().paused, true);
        const a = await submit(h, { delayMs: 0 });
        await submit(h, { delayMs: 0 });
        const queues = (await h.app.inject({ method: 'GET', url: '/v1/queues' })).json<Record<string, unknown>[]>();
        const prepare = queues.find((q) => q.queue === 'demo.sleep.prepare');
        assert.deepEqual(
          { ...prepare, oldestReadyAgeMs: typeof prepare?.oldestReadyAgeMs },
          { queue: 'demo.sleep.prepare', paused: true, ready: 2, scheduled: 0, inFlight: 0, parked: 0, dead: 0, oldestReadyAgeMs: 'number' },
        );
        assert.ok(queues.some((q) => q.queue === 'demo.sleep.finish'), 'empty queues of registered pipelines are listed');

        const resumed = await h.app.inject({ method: 'POST', url: '/v1/queues/demo.sleep.prepare/resume' });
        assert.equal(resumed.json().paused, false);
        const drained = await h.app.inject({ method: 'POST', url: '/v1/queues/demo.sleep.prepare/drain' });
        assert.equal(drained.statusCode, 200);
        assert.equal(drained.json().drained, 2);
        assert.equal(drained.json().ready, 0);
        const run = (await h.app.inject({ method: 'GET', url: `/v1/runs/${a.id}` })).json<RunJson>();
        assert.equal(run.status, 'cancelled');
        const badName = await h.app.inject({ method: 'POST', url: '/v1/queues/bad%20name/pause' });
        assert.equal(badName.statusCode, 400);
      }));
  });
}

for (const store of httpStoreCases()) describeHttp(store);
