/**
 * The dashboard in Debian's Chromium against a real `kiln serve` on SQLite that has API tokens
 * (made with `kiln tokens create`): the page asks for a token, refuses a wrong one, signs in with
 * an admin token (pausing a queue acts on every tenant's work: admin only) and sends it on every
 * call; when that token is revoked (`kiln tokens revoke`) the sign-in form comes back. With live work: a
 * dead-lettered run is found on the dead-letter view, replayed from the UI (confirmation accepted)
 * and seen to succeed; a queue paused from the UI has none of its jobs claimed (checked through the
 * API while other queues keep working) until it is resumed from the UI; the run view draws the
 * stage bars of a three-stage run. Throughout: no console error, no failed request, no request to
 * any host but the kiln server. Screenshots of every view go to a folder the test prints.
 * Every wait is for a condition, with a timeout.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { acceptConfirmation, openDashboardBrowser } from './dashboard-browser.ts';
import { cleanEnv, freePort, KILN_INDEX, killIfRunning, runKiln, spawnKiln, waitUntil } from './kiln-process.ts';

const TEST_TIMEOUT_MS = 180_000;
/** Bound on every wait for a condition (generous: the machine may be busy). */
const WAIT_MS = 30_000;
const PAUSED_QUEUE = 'demo.sleep.prepare';

/** A user pipeline that fails (retryable) while its flag file is missing, and one that always succeeds. */
const PIPELINES = `import { existsSync } from 'node:fs';
import { definePipeline, StageFailure } from ${JSON.stringify(pathToFileURL(KILN_INDEX).href)};
export default [
  definePipeline({
    name: 'e2e.flaky',
    version: 1,
    defaults: { maxAttempts: 2, backoff: { baseMs: 20, capMs: 50 } },
    stages: [{ name: 'work', handler: (ctx) => {
      if (!existsSync(ctx.input.flag)) throw StageFailure.retryable('the flag file is missing', { code: 'FLAG_MISSING' });
      return { ok: true };
    } }],
  }),
  definePipeline({ name: 'e2e.canary', version: 1, stages: [{ name: 'chirp', handler: () => ({ chirped: true }) }] }),
];
`;

interface RunJson {
  id: string;
  status: string;
}

/** A tiny client of the server's public API, with an API token. */
function apiClient(base: string, token: string) {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
  return {
    get: <T>(path: string) => call<T>('GET', path),
    submit: async (pipeline: string, input: unknown) => (await call<RunJson>('POST', '/v1/runs', { pipeline, input })).id,
    /** Waits until the run has one of `statuses`. */
    waitForStatus: (id: string, statuses: readonly string[]) =>
      waitUntil(`run ${id} to be ${statuses.join('|')}`, async () => {
        const run = await call<RunJson>('GET', `/v1/runs/${id}`);
        return statuses.includes(run.status) ? run : undefined;
      }, WAIT_MS, 50),
  };
}

/** Asserts that `errors` are Chromium's "Failed to load resource" lines of 401 answers, and at least one. */
function assertOnly401s(errors: readonly string[], when: string): void {
  assert.ok(errors.length > 0, `the 401s ${when} are logged`);
  for (const error of errors) assert.match(error, /status of 401 \(Unauthorized\)/, `${when}: only 401s`);
}

/**
 * Waits until `probe` (which reads the page through locators) resolves true, asking every 100 ms.
 * (Not `waitForFunction`: it compiles its predicate with eval inside the page, which the
 * dashboard's CSP forbids.)
 */
async function eventually(page: Page, what: string, probe: () => Promise<boolean>): Promise<void> {
  await waitUntil(`${what} on ${page.url()}`, async () => ((await probe()) ? true : undefined), WAIT_MS, 100);
}

test('the dashboard shows live work and steers it through the public API', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-dashboard-'));
  const shots = await mkdtemp(join(tmpdir(), 'kiln-dashboard-shots-'));
  t.diagnostic(`screenshots: ${shots}`);
  await writeFile(join(dir, 'e2e-pipelines.mts'), PIPELINES);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = cleanEnv({ KILN_LOG_LEVEL: 'warn', KILN_ARTIFACTS: join(dir, 'artifacts') });
  // Tokens first: the server asks for one on every /v1 route from its first request.
  const createToken = async (scopes: string, name: string): Promise<{ id: string; token: string }> => {
    const res = await runKiln(['tokens', 'create', '--tenant', 'e2e', '--scopes', scopes, '--name', name, '--json', '--db', join(dir, 'kiln.db')], dir, env);
    assert.equal(res.code, 0, res.stderr);
    return JSON.parse(res.stdout) as { id: string; token: string };
  };
  const scripts = await createToken('admin', 'e2e scripts');
  const operator = await createToken('admin', 'dashboard');
  const serve = spawnKiln(['serve', '--port', String(port), '--db', join(dir, 'kiln.db'), '--pipelines', './e2e-pipelines.mts', '--worker-id', 'e2e-worker'], dir, env);
  t.after(async () => {
    killIfRunning(serve);
    await serve.exited;
    await rm(dir, { recursive: true, force: true });
  });
  await waitUntil('kiln serve /healthz', async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), WAIT_MS, 100).catch((err: unknown) => {
    throw new Error(`${String(err)}\n--- serve output ---\n${serve.output()}`);
  });
  const api = apiClient(base, scripts.token);
  assert.equal((await fetch(`${base}/v1/queues`)).status, 401, 'the server asks for a token');
  const browser = await openDashboardBrowser(base);
  t.after(() => browser.close());
  const { page } = browser;
  const shoot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

  // Sign in: the page asks for a token, refuses a wrong one, accepts the operator's.
  await page.goto(`${base}/dashboard#/queues`);
  await page.locator('#sign-in').waitFor({ timeout: WAIT_MS });
  await shoot('sign-in');
  await page.locator('#sign-in-token').fill(`kiln_${'x'.repeat(43)}`);
  await page.locator('[data-action="sign-in"]').click();
  await eventually(page, 'the wrong token to be refused', async () => /not accepted/.test((await page.locator('#sign-in-error').textContent()) ?? ''));
  await page.locator('#sign-in-token').fill(operator.token);
  await page.locator('[data-action="sign-in"]').click();
  await page.locator('#sign-in').waitFor({ state: 'detached', timeout: WAIT_MS });
  await page.locator('tr[data-queue]').first().waitFor({ timeout: WAIT_MS });
  // Chromium logs each 401 as a console error: the sign-in's (no token, the wrong one) and no other.
  assertOnly401s(browser.errors.splice(0), 'before signing in');

  // Live work: long runs in flight, a render through the single-flight cache, two runs that dead-letter.
  for (let i = 0; i < 3; i++) await api.submit('demo.sleep', { delayMs: 8_000 + i * 1_000 });
  const qr = await fetch(`${base}/v1/qr`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${scripts.token}` }, body: JSON.stringify({ content: 'kiln dashboard' }) });
  assert.ok(qr.ok, `POST /v1/qr: ${qr.status}`);
  const flag = join(dir, 'flag');
  const flaky = [await api.submit('e2e.flaky', { flag }), await api.submit('e2e.flaky', { flag })];
  for (const id of flaky) await api.waitForStatus(id, ['dead_lettered']);

  // Dead letters: both are listed under their code; selected, replayed (confirmed), they succeed.
  await page.goto(`${base}/dashboard#/dead-letters`);
  await page.locator('#dead-letter-groups [data-code="FLAG_MISSING"]').waitFor({ timeout: WAIT_MS });
  for (const id of flaky) await page.locator(`tr[data-run="${id}"]`).waitFor({ timeout: WAIT_MS });
  await shoot('dead-letters');
  await writeFile(flag, 'now it works');
  for (const id of flaky) await page.locator(`tr[data-run="${id}"] input[type="checkbox"]`).check();
  await page.locator('[data-action="replay-selected"]').click();
  await acceptConfirmation(page);
  for (const id of flaky) await api.waitForStatus(id, ['succeeded']);
  await page.goto(`${base}/dashboard#/runs/${flaky[0]}`);
  await eventually(page, 'the replayed run to show succeeded', async () => (await page.locator('.view-head .badge').textContent()) === 'succeeded');

  // Pause from the UI: nothing of the queue is claimed while other queues keep working.
  await page.goto(`${base}/dashboard#/queues`);
  const row = page.locator(`tr[data-queue="${PAUSED_QUEUE}"]`);
  await row.locator('[data-action="pause"]').click();
  await acceptConfirmation(page);
  await row.locator('[data-state="paused"]').waitFor({ timeout: WAIT_MS });
  const queues = await api.get<{ queue: string; paused: boolean }[]>('/v1/queues');
  assert.equal(queues.find((q) => q.queue === PAUSED_QUEUE)?.paused, true);
  const held = [await api.submit('demo.sleep', { delayMs: 150 }), await api.submit('demo.sleep', { delayMs: 100 }), await api.submit('demo.sleep', { delayMs: 50 })];
  // Two canaries submitted after them and run to the end: the worker went round its queues since.
  for (let i = 0; i < 2; i++) await api.waitForStatus(await api.submit('e2e.canary', { i }), ['succeeded']);
  const ready = await api.get<{ runId: string; state: string; attempt: number }[]>(`/v1/jobs?queue=${PAUSED_QUEUE}&state=ready`);
  assert.deepEqual(ready.map((j) => [j.runId, j.attempt]).sort(), held.map((id) => [id, 0]).sort(), 'the paused queue\'s jobs stay ready, never claimed');
  for (const id of held) assert.equal((await api.get<RunJson>(`/v1/runs/${id}`)).status, 'queued');
  // The page was not reloaded: the live refresh shows the waiting jobs.
  await row.locator('td[data-col="ready"]').filter({ hasText: /^3$/ }).waitFor({ timeout: WAIT_MS });
  await shoot('queues-paused');
  await row.locator('[data-action="resume"]').click();
  await acceptConfirmation(page);
  for (const id of held) await api.waitForStatus(id, ['succeeded']);
  await row.locator('[data-state="paused"]').waitFor({ state: 'detached', timeout: WAIT_MS });
  await shoot('queues');

  // The run view draws the three stage bars of a three-stage run.
  await page.goto(`${base}/dashboard#/runs/${held[0]}`);
  const bars = (stage: string) => page.locator(`#timeline g.stage-row[data-stage="${stage}"] [data-kind="succeeded"]`).count();
  await eventually(page, 'three stage rows, each with its succeeded bar', async () => {
    const rows = await page.locator('#timeline g.stage-row').count();
    return rows === 3 && (await bars('prepare')) === 1 && (await bars('process')) === 1 && (await bars('finish')) === 1;
  });
  await shoot('run');
  await page.goto(`${base}/dashboard#/runs/${flaky[0]}`);
  await eventually(page, 'the failed attempts of the replayed run', async () => (await page.locator('#attempts-table tbody tr').count()) === 2);
  await shoot('run-replayed');

  // Runs list, filtered from the UI; the cache view with this process's counters.
  await page.goto(`${base}/dashboard#/runs`);
  await page.locator('#runs-table tbody tr[data-run]').first().waitFor({ timeout: WAIT_MS });
  await page.locator('select[name="status"]').selectOption('succeeded');
  await eventually(page, 'only succeeded runs listed', async () => {
    const statuses = await page.locator('#runs-table tbody tr[data-run] .badge').allTextContents();
    return statuses.length > 0 && statuses.every((status) => status === 'succeeded');
  });
  assert.match(page.url(), /status=succeeded/);
  await shoot('runs');
  await page.goto(`${base}/dashboard#/cache`);
  await page.locator('tr[data-cache="qr"]').waitFor({ timeout: WAIT_MS });
  await shoot('cache');

  assert.deepEqual(browser.errors, [], 'no console or page errors while signed in');

  // Revoked: the page's next refresh gets 401 and the sign-in form comes back.
  const revoked = await runKiln(['tokens', 'revoke', operator.id, '--db', join(dir, 'kiln.db')], dir, env);
  assert.equal(revoked.code, 0, revoked.stderr);
  await page.goto(`${base}/dashboard#/queues`);
  await page.locator('#sign-in').waitFor({ timeout: WAIT_MS });
  assert.match((await page.locator('#sign-in').textContent()) ?? '', /refused the token/);
  assertOnly401s(browser.errors.splice(0), 'after the revoke');

  assert.deepEqual(browser.foreignRequests, [], 'no request to another host');
  assert.deepEqual(browser.failedRequests, [], 'no failed request');
});
