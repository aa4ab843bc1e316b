/**
 * The read routes the dashboard uses, end to end over every store with `app.inject()`: run
 * filters by tenant and creation time, failed attempts, dead letters (listed and grouped by code),
 * queue activity, cache counters and entries, publications and artifacts; and the dashboard's
 * static files with their Content-Security-Policy.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { httpStoreCases, type HttpStoreCase } from './http-stores.ts';
import { postJson, withHarness, type HttpHarness, type RunJson } from './http-harness.ts';

async function submit(h: HttpHarness, input: unknown, extra: Record<string, unknown> = {}): Promise<RunJson> {
  const res = await postJson(h.app, '/v1/runs', { pipeline: 'demo.sleep', input, ...extra });
  assert.equal(res.statusCode, 202, res.body);
  return res.json<RunJson>();
}

async function getJson<T>(h: HttpHarness, url: string): Promise<T> {
  const res = await h.app.inject({ method: 'GET', url });
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json<T>();
}

function describeOperatorReads({ name, skip, create: createStore }: HttpStoreCase): void {
  describe(`operator read routes on the ${name} store`, { skip }, () => {
    test('GET /v1/runs filters by tenant and creation time; a date no calendar has is 400', () =>
      withHarness(createStore, async (h) => {
        const acme = await submit(h, { delayMs: 0 }, { tenant: 'acme' });
        const other = await submit(h, { delayMs: 0 }, { tenant: 'other' });
        const ids = async (query: string) => (await getJson<RunJson[]>(h, `/v1/runs?${query}`)).map((r) => r.id);
        assert.deepEqual(await ids('tenant=acme'), [acme.id]);
        const created = String(acme.createdAt);
        assert.deepEqual(await ids(`createdAfter=${encodeURIComponent(created)}`), [other.id, acme.id]);
        assert.deepEqual(await ids(`createdBefore=${encodeURIComponent(created)}`), []);
        assert.deepEqual(await ids('createdAfter=2000-01-01T00:00:00%2B02:00&tenant=other'), [other.id]);
        for (const bad of ['createdAfter=yesterday', 'createdBefore=2026-13-45T99:99:00Z']) {
          const res = await h.app.inject({ method: 'GET', url: `/v1/runs?${bad}` });
          assert.equal(res.statusCode, 400, bad);
          assert.equal(res.json().code, 'VALIDATION_FAILED');
        }
      }));

    test('failed attempts, dead letters by code and queue activity show a run that dead-lettered', () =>
      withHarness(createStore, async (h) => {
        h.worker.start();
        const run = await submit(h, { delayMs: 0, failAt: 'process' });
        await h.waitForStatus(run.id, ['dead_lettered']);
        const ok = await submit(h, { delayMs: 0 });
        await h.waitForStatus(ok.id, ['succeeded']);

        const attempts = await getJson<{ stage: string; attempt: number; action: string; workerId: string; error: { code: string }; startedAt: string; failedAt: string }[]>(h, `/v1/runs/${run.id}/attempts`);
        assert.deepEqual(
          attempts.map((a) => [a.stage, a.attempt, a.action, a.workerId, a.error.code]),
          [
            ['process', 1, 'retry', 'test-worker', 'DEMO_FAILURE'],
            ['process', 2, 'dead_letter', 'test-worker', 'DEMO_FAILURE'],
          ],
        );
        for (const a of attempts) assert.ok(Date.parse(a.startedAt) <= Date.parse(a.failedAt));
        assert.deepEqual(await getJson(h, `/v1/runs/${ok.id}/attempts`), []);
        assert.equal((await h.app.inject({ method: 'GET', url: '/v1/runs/run_nope/attempts' })).statusCode, 404);

        const groups = await getJson<{ code: string; count: number; queues: string[]; latestJobId: string }[]>(h, '/v1/dead-letters?groupBy=code');
        assert.deepEqual(
          groups.map((g) => [g.code, g.count, g.queues]),
          [['DEMO_FAILURE', 1, ['demo.sleep.process']]],
        );
        const dead = await getJson<{ id: string; runId: string; state: string }[]>(h, '/v1/dead-letters?code=DEMO_FAILURE');
        assert.deepEqual(
          dead.map((j) => [j.id, j.runId, j.state]),
          [[groups[0]?.latestJobId, run.id, 'dead']],
        );
        assert.deepEqual(await getJson(h, '/v1/dead-letters?code=OTHER'), []);
        assert.equal((await h.app.inject({ method: 'GET', url: '/v1/dead-letters?groupBy=queue' })).statusCode, 400);

        type Activity = { bucketMs: number; ageBoundsMs: number[]; queues: { queue: string; completed: number[]; failed: number[]; readyAges: number[] }[] };
        const sum = (values: number[] | undefined): number => (values ?? []).reduce((a, b) => a + b, 0);
        // The worker reports what it committed on its reaper tick (every 100 ms here).
        let activity: Activity;
        for (const deadline = Date.now() + 10_000; ; ) {
          activity = await getJson<Activity>(h, '/v1/queues/activity?bucketMinutes=60&buckets=2');
          const process = activity.queues.find((q) => q.queue === 'demo.sleep.process');
          if (sum(process?.completed) === 1 && sum(process?.failed) === 2) break;
          assert.ok(Date.now() < deadline, `activity not recorded: ${JSON.stringify(process)}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.equal(activity.bucketMs, 3_600_000);
        const process = activity.queues.find((q) => q.queue === 'demo.sleep.process');
        assert.equal(process?.completed.length, 2);
        assert.equal(process?.readyAges.length, activity.ageBoundsMs.length + 1);
        const idle = activity.queues.find((q) => q.queue === 'thumbnails.ingest');
        assert.deepEqual(idle?.completed, [0, 0], 'every known queue is listed');
        const tooLong = await h.app.inject({ method: 'GET', url: '/v1/queues/activity?bucketMinutes=60&buckets=25' });
        assert.equal(tooLong.statusCode, 400, 'more than a day');
      }));

    test('cache stats count this process\'s lookups; publications and artifacts are served by ref', () =>
      withHarness(createStore, async (h) => {
        h.worker.start();
        const qr = await postJson(h.app, '/v1/qr', { content: 'operator reads', wait: 10_000 });
        assert.equal(qr.statusCode, 200, qr.body);
        const stats = await getJson<{ cache: string; miss: number; builds: number }[]>(h, '/v1/cache/stats');
        assert.deepEqual(
          stats.map((s) => [s.cache, s.miss, s.builds]),
          [['qr', 1, 1]],
        );
        const entries = await getJson<Record<string, unknown>[]>(h, '/v1/cache/entries?status=ready');
        assert.equal(entries.length, 1);
        assert.equal('builderToken' in (entries[0] ?? {}), false, 'builder tokens are never shown');
        assert.deepEqual(await getJson(h, '/v1/cache/entries?status=building'), []);

        const hash = String(qr.headers.etag).replaceAll('"', '');
        const pubs = await getJson<{ profile: string; artifactRef: string; artifactUrl: string }[]>(h, `/v1/publications?subjectId=${hash}`);
        assert.equal(pubs.length, 1);
        const artifact = await h.app.inject({ method: 'GET', url: pubs[0]?.artifactUrl ?? '' });
        assert.equal(artifact.statusCode, 200);
        assert.equal(artifact.headers['content-type'], 'image/png');
        assert.deepEqual(artifact.rawPayload, qr.rawPayload);
        assert.match(String(artifact.headers['content-security-policy']), /sandbox/);
        const missing = await h.app.inject({ method: 'GET', url: `/v1/artifacts/sha256:${'0'.repeat(64)}` });
        assert.equal(missing.statusCode, 404);
        assert.equal((await h.app.inject({ method: 'GET', url: '/v1/artifacts/not-a-ref' })).statusCode, 400);
      }));
  });
}

for (const storeCase of httpStoreCases()) describeOperatorReads(storeCase);

describe('the dashboard page', () => {
  test('GET /dashboard serves the page and its assets from this origin only, under a strict CSP; unknown files are 404', () =>
    withHarness(() => createMemoryStore(), async (h) => {
      const page = await h.app.inject({ method: 'GET', url: '/dashboard' });
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      const csp = String(page.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      const assets = [...page.body.matchAll(/(?:src|href)="(\/dashboard\/[^"]+)"/g)].map((m) => m[1] as string);
      assert.ok(assets.includes('/dashboard/js/main.js') && assets.includes('/dashboard/dashboard.css'), assets.join());
      assert.doesNotMatch(page.body, /https?:\/\//, 'the page names no other host');
      for (const url of assets) {
        const res = await h.app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200, url);
        assert.doesNotMatch(res.body, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/, `${url} names no other host`);
      }
      const again = await h.app.inject({ method: 'GET', url: '/dashboard', headers: { 'if-none-match': String(page.headers.etag) } });
      assert.equal(again.statusCode, 304);
      for (const url of ['/dashboard/nope.js', '/dashboard/../package.json', '/dashboard/js/%2e%2e/%2e%2e/index.html']) {
        assert.equal((await h.app.inject({ method: 'GET', url })).statusCode, 404, url);
      }
    }));
});
