/**
 * Injected latency (src/engine/injected-latency.ts): each call of a slowed store or artifact store
 * is made only once its latency has passed (on a fake clock, so no timing is measured); `close`,
 * `onWake` and `capabilities` pass straight through; a store slower than the HTTP request
 * deadline answers 503 STORE_UNAVAILABLE with Retry-After and serves again once the latency is
 * gone; and a `kiln` process reads the test-hook variables (a bad value stops it at start).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import { ARTIFACT_LATENCY_ENV, STORE_LATENCY_ENV, withArtifactLatency, withStoreLatency, type Latency } from '../../src/engine/injected-latency.ts';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { cleanEnv, exitWithin, freePort, killIfRunning, runKiln, spawnKiln, waitUntil } from '../e2e/kiln-process.ts';
import { collect } from '../support/artifact-store-suite.ts';
import { openHttpHarness } from './http-harness.ts';

const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
const newDir = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-latency-'));
  dirs.push(dir);
  return dir;
};

/** Whether `promise` has settled after the microtasks and I/O callbacks queued now have run. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('injected latency wrappers', () => {
  test('a slowed store makes each port call only after its latency, passes close/onWake/capabilities through, and adds nothing at 0', async () => {
    const clock = createFakeClock();
    const raw = createMemoryStore({ clock, ids: createIdGenerator(clock) });
    await raw.migrate();
    const latency: Latency = { ms: 500 };
    const store = withStoreLatency(raw, latency, clock);
    assert.equal(store.capabilities, raw.capabilities);
    const allocated = store.versions.allocate('scope', 'key');
    const now = store.now();
    assert.equal(await settledYet(allocated), false);
    await clock.advance(499);
    assert.equal(await settledYet(now), false);
    // Not made yet: the raw store hands out the first value.
    assert.equal(await raw.versions.allocate('scope', 'key'), 1);
    await clock.advance(1);
    assert.equal(await allocated, 2);
    assert.equal(await settledYet(now), true);
    latency.ms = 0;
    assert.equal(await settledYet(store.now()), true, 'latency 0: the call is made at once');
    const unsubscribe = store.onWake(() => {});
    assert.equal(typeof unsubscribe, 'function');
    unsubscribe();
    await store.close();
    await assert.rejects(raw.now(), { code: 'STORE_UNAVAILABLE' });
  });

  test('a slowed artifact store delays puts, gets and listings by its latency', async () => {
    const clock = createFakeClock();
    const latency: Latency = { ms: 300 };
    const artifacts = withArtifactLatency(createFsArtifactStore({ root: join(await newDir(), 'artifacts') }), latency, clock);
    const put = artifacts.put(Buffer.from('slow bytes'));
    assert.equal(await settledYet(put), false);
    await clock.advance(300);
    const ref = await put;
    const listed = collect(artifacts.list());
    assert.equal(await settledYet(listed), false);
    await clock.advance(300);
    assert.deepEqual((await listed).map((o) => o.ref), [ref.ref]);
    latency.ms = 0;
    assert.equal(Buffer.from(await artifacts.get(ref.ref)).toString(), 'slow bytes');
  });
});

describe('a store slower than the request deadline', () => {
  test('requests answer 503 STORE_UNAVAILABLE with Retry-After while it lasts, and 200 once the latency is gone', async () => {
    const latency: Latency = { ms: 1_000 };
    const h = await openHttpHarness((dir) => withStoreLatency(createSqliteStore({ path: join(dir, 'kiln.db') }), latency), { requestTimeoutMs: 100 });
    try {
      const slow = await h.app.inject({ method: 'GET', url: '/v1/runs' });
      assert.equal(slow.statusCode, 503, slow.body);
      assert.equal(slow.json<{ code: string }>().code, 'STORE_UNAVAILABLE');
      assert.ok(Number(slow.headers['retry-after']) >= 1, 'Retry-After');
      latency.ms = 0;
      const fast = await h.app.inject({ method: 'GET', url: '/v1/runs' });
      assert.equal(fast.statusCode, 200, fast.body);
    } finally {
      latency.ms = 0;
      await h.close();
    }
  });
});

describe('the test-hook variables in a kiln process', () => {
  // KILN_FAULT_STORE_LATENCY_MS in a process: the slow-store fault scenario (test/integration/fault-scenarios.test.ts).
  test(`${ARTIFACT_LATENCY_ENV} slows the artifact store of kiln serve past its request deadline; a value that is not a number stops the process`, { timeout: 90_000 }, async () => {
    const dir = await newDir();
    await writeFile(join(dir, 'kiln.yaml'), 'http:\n  requestTimeoutMs: 200ms\n');
    const bad = await runKiln(['serve', '--no-worker', '--port', '0'], dir, cleanEnv({ [STORE_LATENCY_ENV]: 'soon' }), 60_000);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr + bad.stdout, new RegExp(`${STORE_LATENCY_ENV}: must be a whole number of milliseconds`));
    const port = await freePort();
    const serve = spawnKiln(['serve', '--no-worker', '--port', String(port)], dir, cleanEnv({ [ARTIFACT_LATENCY_ENV]: '3000', KILN_LOG_LEVEL: 'error' }));
    try {
      const base = `http://127.0.0.1:${port}`;
      // The store is fast: reads answer.
      const runs = await waitUntil('kiln serve to answer', () => fetch(`${base}/v1/runs`), 60_000);
      assert.equal(runs.status, 200, await runs.text());
      // The health probe writes to the artifact store, which answers after the deadline.
      const health = await fetch(`${base}/healthz`);
      assert.equal(health.status, 503, await health.clone().text());
      assert.equal(((await health.json()) as { code: string }).code, 'STORE_UNAVAILABLE');
      assert.ok(health.headers.has('retry-after'));
      serve.child.kill('SIGTERM');
      await exitWithin(serve, 'kiln serve to stop', 30_000);
    } finally {
      killIfRunning(serve);
      await serve.exited;
    }
  });
});
