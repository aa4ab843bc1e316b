/**
 * PostgreSQL goes down in the middle of a load and comes back: the API answers 503 with
 * Retry-After while it is down (quickly, never hanging), workers and API reconnect by themselves,
 * and afterwards every submitted run exists exactly once and succeeded, each stage once.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { dropSchema } from '../integration/http-stores.ts';
import {
  canRestartPostgres,
  createSchemaName,
  postgresSkipReason,
  sharedPostgres,
  startStoppedPostgres,
  stopPostgresForOutage,
} from '../support/postgres-cluster.ts';
import { cleanEnv, freePort, killIfRunning, runKiln, spawnKiln, waitUntil, type KilnProcess } from './kiln-process.ts';

const RUNS = 300;
const OUTAGE_MS = 3_000;

/** POSTs one run, retrying 503s (and refused connections) with the same Idempotency-Key. */
async function submitWithRetry(base: string, i: number): Promise<void> {
  for (;;) {
    const res = await fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `restart-${i}` },
      body: JSON.stringify({ pipeline: 'demo.sleep', input: { delayMs: 20 } }),
    }).catch(() => undefined);
    if (res && (res.status === 202 || res.status === 200)) return;
    if (res) assert.equal(res.status, 503, await res.text());
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('PostgreSQL restarted under load', { skip: postgresSkipReason() }, () => {
  test('API answers 503 + Retry-After while down; nothing is lost or duplicated', { timeout: 120_000 }, async (t) => {
    const { url } = await sharedPostgres();
    if (!canRestartPostgres()) {
      t.skip('needs a private cluster (KILN_PG_URL servers are not restarted by tests)');
      return;
    }
    const schema = createSchemaName('kiln_restart_');
    const dir = await mkdtemp(join(tmpdir(), 'kiln-restart-'));
    const procs: KilnProcess[] = [];
    t.after(async () => {
      procs.forEach(killIfRunning);
      await dropSchema(url, schema);
      await rm(dir, { recursive: true, force: true });
    });
    await writeFile(join(dir, 'kiln.yaml'), 'http:\n  requestTimeoutMs: 2s\npipelines:\n  demo.sleep:\n    defaults: { leaseMs: 5s, maxAttempts: 10 }\n');
    const env = cleanEnv({ KILN_PG_SCHEMA: schema, KILN_LOG_LEVEL: 'warn' });
    const storeArgs = ['--store', url];
    assert.equal((await runKiln(['migrate', ...storeArgs], dir, env)).code, 0);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    procs.push(spawnKiln(['serve', '--port', String(port), ...storeArgs], dir, env));
    procs.push(spawnKiln(['worker', ...storeArgs], dir, env));
    await waitUntil('the API answers /healthz', async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 20_000);

    let next = 0;
    const load = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < RUNS) {
          await submitWithRetry(base, next++);
          await new Promise((r) => setTimeout(r, 15));
        }
      }),
    );
    await waitUntil('a third of the runs submitted', async () => (next > RUNS / 3 ? true : undefined), 30_000);

    await stopPostgresForOutage();
    const outageStart = Date.now();
    const probes: { status: number; retryAfter: string | null; ms: number }[] = [];
    while (Date.now() - outageStart < OUTAGE_MS) {
      const started = Date.now();
      const res = await fetch(`${base}/v1/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `probe-${probes.length}` },
        body: JSON.stringify({ pipeline: 'demo.sleep', input: { delayMs: 1 } }),
      });
      probes.push({ status: res.status, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started });
      await res.arrayBuffer();
    }
    await startStoppedPostgres();
    await load;

    assert.ok(probes.length > 0);
    for (const p of probes) {
      assert.equal(p.status, 503, JSON.stringify(p));
      assert.ok(p.retryAfter, 'Retry-After is set');
      assert.ok(p.ms < 4_000, `answered in ${p.ms} ms, not hanging`);
    }

    const store = createPostgresStore({ connectionString: url, schema });
    t.after(() => store.close());
    const runs = await waitUntil(
      'every run to end',
      async () => {
        const all = await store.reads.listRuns({ limit: 1_000 });
        return all.length >= RUNS && all.every((r) => r.status !== 'queued' && r.status !== 'running') ? all : undefined;
      },
      60_000,
      500,
    );
    const keys = runs.map((r) => r.idempotencyKey);
    assert.equal(new Set(keys).size, runs.length, 'no run was duplicated');
    const submitted = runs.filter((r) => r.idempotencyKey?.startsWith('restart-'));
    assert.equal(submitted.length, RUNS, 'no run was lost');
    for (const run of runs) {
      assert.equal(run.status, 'succeeded', `${run.id} ${run.status}`);
      assert.equal((await store.reads.readLedger(run.id)).length, 3);
    }
  });
});
