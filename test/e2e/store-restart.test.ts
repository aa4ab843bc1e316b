/**
 * The store's server goes down in the middle of a load and comes back (PostgreSQL: `pg_ctl stop`;
 * Redis: SIGKILL of redis-server, its AOF kept): the API answers 503 STORE_UNAVAILABLE with
 * Retry-After while it is down (quickly, never hanging), workers and API reconnect by themselves,
 * and afterwards every submitted run exists exactly once and succeeded, each stage once in the
 * ledger. On Redis "none lost" needs a server that loses nothing it acknowledged when killed:
 * the outage switches it to `appendfsync always` first (see stopRedisForOutage; under `everysec`
 * a slow fsync lets Redis answer writes it has not yet written to the AOF).
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { outageServers } from '../support/outage-servers.ts';
import { cleanEnv, freePort, spawnKiln, waitUntil } from './kiln-process.ts';
import { openE2eScene, qrE2eStoreCases } from './qr-stores.ts';

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

/** What one POST /v1/runs answered while the server was down. */
interface Probe {
  status: number;
  code: unknown;
  retryAfter: string | null;
  ms: number;
}

/** POSTs runs back to back for `ms` (the outage) and returns what each answered. */
async function probeFor(base: string, ms: number): Promise<Probe[]> {
  const probes: Probe[] = [];
  const start = Date.now();
  while (Date.now() - start < ms) {
    const started = Date.now();
    const res = await fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `probe-${probes.length}` },
      body: JSON.stringify({ pipeline: 'demo.sleep', input: { delayMs: 1 } }),
    });
    const body = (await res.json().catch(() => ({}))) as { code?: unknown };
    probes.push({ status: res.status, code: body.code, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started });
  }
  return probes;
}

/** `succeeded: 290, running: 10` for the runs read. */
function statusCounts(runs: readonly { status: string }[]): string {
  const counts = new Map<string, number>();
  for (const r of runs) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${status}: ${n}`).join(', ') || 'none';
}

const servers = outageServers();
const stores = qrE2eStoreCases();
const CASES = [
  { server: servers.postgres, storeCase: stores.postgres },
  { server: servers.redis, storeCase: stores.redis },
];

for (const { server, storeCase } of CASES) describe(`${server.name} restarted under load`, { skip: server.skip }, () => {
  test('API answers 503 + Retry-After while down; nothing is lost or duplicated', { timeout: 120_000 }, async (t) => {
    if (!(await server.owned())) {
      t.skip('needs a private server (KILN_PG_URL / KILN_REDIS_URL servers are not stopped by tests)');
      return;
    }
    const { dir, store: e2eStore, procs } = await openE2eScene(t, storeCase, 'kiln-restart-');
    await writeFile(join(dir, 'kiln.yaml'), 'http:\n  requestTimeoutMs: 2s\npipelines:\n  demo.sleep:\n    defaults: { leaseMs: 5s, maxAttempts: 10 }\n');
    const env = cleanEnv({ ...e2eStore.env, KILN_LOG_LEVEL: 'warn' });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    procs.push(spawnKiln(['serve', '--port', String(port), ...e2eStore.args], dir, env));
    procs.push(spawnKiln(['worker', ...e2eStore.args], dir, env));
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

    await server.stop();
    let probes: Probe[];
    try {
      probes = await probeFor(base, OUTAGE_MS);
    } finally {
      await server.start();
    }
    await load;

    assert.ok(probes.length > 0);
    for (const p of probes) {
      assert.deepEqual([p.status, p.code], [503, 'STORE_UNAVAILABLE'], JSON.stringify(p));
      assert.match(String(p.retryAfter), /^\d+$/, 'Retry-After is set');
      assert.ok(p.ms < 4_000, `answered in ${p.ms} ms, not hanging`);
    }

    const { store } = e2eStore;
    let seen = 'no answer from the store';
    const runs = await waitUntil(
      'every run to end',
      async () => {
        const all = await store.reads.listRuns({ limit: 1_000 });
        seen = statusCounts(all);
        return all.length >= RUNS && all.every((r) => r.status !== 'queued' && r.status !== 'running') ? all : undefined;
      },
      60_000,
      500,
    ).catch((err: Error) => {
      const outputs = procs.map((p) => `--- kiln ${p.child.spawnargs.slice(2, 3).join(' ')} (exit ${p.child.exitCode ?? p.child.signalCode ?? 'none'}):\n${p.output().slice(-4_000)}`);
      throw new Error(`${err.message}; runs by status: ${seen}\n${outputs.join('\n')}`);
    });
    const keys = runs.map((r) => r.idempotencyKey);
    assert.equal(new Set(keys).size, runs.length, 'no run was duplicated');
    const submitted = runs.filter((r) => r.idempotencyKey?.startsWith('restart-'));
    assert.equal(submitted.length, RUNS, 'no run was lost');
    for (const run of runs) {
      assert.equal(run.status, 'succeeded', `${run.id} ${run.status}`);
      assert.deepEqual((await store.reads.readLedger(run.id)).map((e) => e.stage), ['prepare', 'process', 'finish'], `ledger of ${run.id}`);
    }
    t.diagnostic(`${probes.length} requests answered 503 during the ${OUTAGE_MS} ms outage`);
  });
});
