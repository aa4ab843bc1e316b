/**
 * `kiln serve` as a real process: it answers /healthz within 10 s on a fresh store, runs a demo
 * pipeline over real HTTP, and shuts down on SIGTERM (gracefully) or on a second signal (at once).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { freePort, killIfRunning, spawnKiln, waitUntil, type KilnProcess } from './kiln-process.ts';

/** Each test normally takes a few seconds; this bounds a hung child process. */
const E2E_TIMEOUT_MS = 30_000;

interface Server {
  proc: KilnProcess;
  base: string;
  dir: string;
}

/** Starts `kiln serve` on a free port with a store in a fresh temp dir, waiting for /healthz. */
async function startServe(t: { after(fn: () => Promise<void>): void }, kilnYaml?: string): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-serve-'));
  const port = await freePort();
  const args = ['serve', '--port', String(port), '--db', join(dir, 'store', 'kiln.db')];
  if (kilnYaml !== undefined) await writeFile(join(dir, 'kiln.yaml'), kilnYaml);
  const proc = spawnKiln(args, dir);
  t.after(async () => {
    killIfRunning(proc);
    await proc.exited;
    await rm(dir, { recursive: true, force: true });
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(
    '/healthz',
    async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined),
    10_000,
    100,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}\n--- serve output ---\n${proc.output()}`);
  });
  return { proc, base, dir };
}

async function submitDemo(base: string, input: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${base}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pipeline: 'demo.sleep', input }),
  });
  assert.equal(res.status, 202);
  return ((await res.json()) as { id: string }).id;
}

test('kiln serve answers /healthz within 10 s, runs a demo run over HTTP and exits 0 on SIGTERM', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const { proc, base } = await startServe(t);
  const health = (await (await fetch(`${base}/healthz`)).json()) as { status: string; store: string };
  assert.deepEqual([health.status, health.store], ['ok', 'sqlite']);

  const runId = await submitDemo(base, { delayMs: 20 });
  const run = await waitUntil(
    'the run to succeed',
    async () => {
      const body = (await (await fetch(`${base}/v1/runs/${runId}`)).json()) as { status: string; stages: { stage: string; status: string }[] };
      return body.status === 'succeeded' ? body : undefined;
    },
    10_000,
  );
  assert.deepEqual(
    run.stages.map((s) => s.status),
    ['succeeded', 'succeeded', 'succeeded'],
  );
  const metrics = await (await fetch(`${base}/metrics`)).text();
  assert.match(metrics, /kiln_runs_total\{pipeline="demo.sleep",status="succeeded",tenant=""\} 1/);

  proc.child.kill('SIGTERM');
  const exit = await proc.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, proc.output());
});

test('on SIGTERM an in-flight job past the grace period is handed back and the process exits 0', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const { proc, base, dir } = await startServe(t, 'worker:\n  shutdownGraceMs: 200ms\n');
  const runId = await submitDemo(base, { delayMs: 60_000 });
  await waitUntil(
    'the prepare job to be leased',
    async () => {
      const jobs = (await (await fetch(`${base}/v1/jobs?runId=${runId}&state=leased`)).json()) as unknown[];
      return jobs.length === 1 ? true : undefined;
    },
    10_000,
  );
  proc.child.kill('SIGTERM');
  assert.deepEqual(await proc.exited, { code: 0, signal: null }, proc.output());

  // The store shows the job ready again, its interrupted claim not counted as an attempt.
  const store = createSqliteStore({ path: join(dir, 'store', 'kiln.db') });
  try {
    await store.migrate();
    const [job] = await store.reads.listJobs({ runId, limit: 10 });
    assert.equal(job?.state, 'ready');
    assert.equal(job?.attempt, 0);
    assert.equal(job?.leaseOwner, null);
  } finally {
    await store.close();
  }
});

test('a second signal during a graceful shutdown exits at once', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const { proc, base } = await startServe(t);
  const runId = await submitDemo(base, { delayMs: 60_000 });
  await waitUntil(
    'the prepare job to be leased',
    async () => {
      const jobs = (await (await fetch(`${base}/v1/jobs?runId=${runId}&state=leased`)).json()) as unknown[];
      return jobs.length === 1 ? true : undefined;
    },
    10_000,
  );
  proc.child.kill('SIGTERM');
  // The default grace period (10 s) keeps the process waiting for the in-flight job.
  await waitUntil('the shutdown to start', async () => (proc.output().includes('shutting down') ? true : undefined), 5_000);
  proc.child.kill('SIGINT');
  const exit = await proc.exited;
  assert.deepEqual(exit, { code: 130, signal: null }, proc.output());
});
