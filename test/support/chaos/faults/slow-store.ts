/**
 * Slow store, in a real process: `kiln serve` (API and worker) started with
 * KILN_FAULT_STORE_LATENCY_MS far beyond its request deadline and its stages' lease. Every
 * submission answers 503 STORE_UNAVAILABLE with Retry-After (yet reaches the store late), and the
 * worker's heartbeats land after its leases ran out. The slow process is stopped, a normal one
 * started, and the client retries every submission with its Idempotency-Key: every run completes
 * once (the late submissions are not duplicated), no stage twice, none stuck.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../../../../src/core/ports/store.ts';
import { STORE_LATENCY_ENV } from '../../../../src/engine/injected-latency.ts';
import { cleanEnv, exitWithin, freePort, killIfRunning, spawnKiln, type KilnProcess } from '../../../e2e/kiln-process.ts';
import type { FaultReport, FaultScenario } from './index.ts';
import { countOutcome, reportOf, sleep, waitFor, waitForRuns } from './fault-runs.ts';
import { openFaultStore } from './fault-stores.ts';

const RUNS = 30;
const REQUEST_TIMEOUT_MS = 300;
const LEASE_MS = 1_000;
/** Beyond the request deadline and the lease. */
const LATENCY_MS = 1_500;
const DEMO_STAGES = ['prepare', 'process', 'finish'] as const;

const KILN_YAML = `http:
  requestTimeoutMs: ${REQUEST_TIMEOUT_MS}ms
worker:
  pollMs: 50ms
  reapMs: 300ms
  shutdownGraceMs: 1s
pipelines:
  demo.sleep:
    defaults: { leaseMs: ${LEASE_MS}ms, heartbeatMs: 250ms, maxAttempts: 100, backoff: { baseMs: 20, capMs: 200 } }
`;

/** One submission's answer: its status, its code and whether it carried Retry-After. */
interface Answer {
  status: number;
  code?: string;
  retryAfter: boolean;
  runId?: string;
}

async function submit(base: string, key: string): Promise<Answer> {
  const res = await fetch(`${base}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ pipeline: 'demo.sleep', input: { delayMs: 20 } }),
  });
  const body = (await res.json().catch(() => ({}))) as { code?: string; id?: string };
  return { status: res.status, ...(body.code ? { code: body.code } : {}), retryAfter: res.headers.has('retry-after'), ...(res.ok && body.id ? { runId: body.id } : {}) };
}

/** Starts `kiln serve` and waits until it answers HTTP at all (a slow store answers 503). */
async function startServe(dir: string, args: string[], env: NodeJS.ProcessEnv, procs: KilnProcess[]): Promise<string> {
  const port = await freePort();
  const proc = spawnKiln(['serve', '--port', String(port), ...args], dir, env);
  procs.push(proc);
  const base = `http://127.0.0.1:${port}`;
  const up = await waitFor(async () => {
    if (proc.child.exitCode !== null) throw new Error(`kiln serve exited:\n${proc.output()}`);
    return fetch(`${base}/healthz`).then(
      () => true,
      () => false,
    );
  }, 60_000);
  if (!up) throw new Error(`kiln serve did not answer within 60 s:\n${proc.output()}`);
  return base;
}

async function stop(proc: KilnProcess): Promise<void> {
  proc.child.kill('SIGTERM');
  try {
    await exitWithin(proc, 'kiln serve to stop', 30_000);
  } catch {
    killIfRunning(proc);
    await proc.exited;
  }
}

async function allRunIds(store: Store): Promise<string[]> {
  return (await store.reads.listRuns({ limit: 1_000 })).map((r) => r.id);
}

export const slowStoreScenario: FaultScenario = {
  name: 'slow-store',
  async run({ store: kind, seed, log }): Promise<FaultReport> {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-fault-slow-store-'));
    const procs: KilnProcess[] = [];
    const faultStore = await openFaultStore(kind, dir);
    const store = faultStore.connect();
    try {
      await writeFile(join(dir, 'kiln.yaml'), KILN_YAML);
      const env = cleanEnv({ ...faultStore.env, KILN_LOG_LEVEL: 'error' });
      const keys = Array.from({ length: RUNS }, (_, i) => `slow-store-${seed}-${i}`);

      log(`slow-store: kiln serve with ${STORE_LATENCY_ENV}=${LATENCY_MS} (request deadline ${REQUEST_TIMEOUT_MS} ms, lease ${LEASE_MS} ms); submitting ${RUNS} runs once each`);
      const slowBase = await startServe(dir, faultStore.args, { ...env, [STORE_LATENCY_ENV]: String(LATENCY_MS) }, procs);
      const slowAnswers = await Promise.all(keys.map((key) => submit(slowBase, key)));
      const unavailable = slowAnswers.filter((a) => a.status === 503 && a.code === 'STORE_UNAVAILABLE');
      // The late submissions reach the store, and the slow worker takes some of their jobs.
      await waitFor(async () => {
        const ids = await allRunIds(store);
        const details = await Promise.all(ids.map((id) => store.reads.getRun(id)));
        return details.some((d) => d?.stages.some((s) => s.attempts > 0));
      }, 30_000);
      await sleep(2 * LATENCY_MS);
      const whileSlow = await Promise.all((await allRunIds(store)).map((id) => store.reads.getRun(id)));
      const runsWhileSlow = whileSlow.length;
      const attemptsWhileSlow = whileSlow.reduce((n, d) => n + (d?.stages.reduce((m, s) => m + s.attempts, 0) ?? 0), 0);
      const leasedBeforeStop = (await store.reads.listJobs({ state: 'leased', limit: 1_000 })).length;
      log(`slow-store: ${unavailable.length}/${RUNS} answers 503 STORE_UNAVAILABLE, ${runsWhileSlow} runs reached the store; restarting without latency`);
      await stop(procs[0]!);

      const base = await startServe(dir, faultStore.args, env, procs);
      const runIds: string[] = [];
      let retried503 = 0;
      for (const key of keys) {
        for (let tries = 0; ; tries++) {
          const answer = await submit(base, key);
          if (answer.runId) {
            runIds.push(answer.runId);
            break;
          }
          if (answer.status !== 503 || tries > 100) throw new Error(`submission ${key} answered ${answer.status} ${answer.code ?? ''}`);
          retried503 += 1;
          await sleep(100);
        }
      }
      await waitForRuns(store, runIds, 60_000);
      const outcome = await countOutcome(store, runIds, { stages: DEMO_STAGES, extraRuns: (await allRunIds(store)).length - new Set(runIds).size });
      await stop(procs[1]!);
      return reportOf('slow-store', runIds.length, outcome, {
        latencyMs: LATENCY_MS,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        answers503WhileSlow: unavailable.length,
        answers503WithRetryAfter: unavailable.filter((a) => a.retryAfter).length,
        otherAnswersWhileSlow: slowAnswers.length - unavailable.length,
        runsReachedStoreWhileSlow: runsWhileSlow,
        stageAttemptsWhileSlow: attemptsWhileSlow,
        leasedBeforeStop,
        retried503AfterRestart: retried503,
      });
    } finally {
      procs.forEach(killIfRunning);
      await Promise.all(procs.map((p) => p.exited));
      await store.close();
      await faultStore.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
