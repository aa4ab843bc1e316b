/**
 * The scale suite's worker curve: chains/s with 1, 2, 4 ... `kiln worker`-like processes
 * (bench/scale/chain-worker.ts) on ONE PostgreSQL schema, and what limits it: the workers' CPU
 * (each reports its own) against the database's (postmaster and backends, from /proc) and its
 * commits (`pg_stat_database.xact_commit`).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { parseResultLine } from '../engine/engine-result.ts';
import { benchPipeline, PIPELINE, warmupRunsFor } from '../engine/kiln-bench.ts';
import { submitHeads, SubmitMode } from '../engine/submit-heads.ts';
import { postmasterPidOf, serverCpuSeconds } from '../engine-pg/server-cpu.ts';

/** One point of the curve. */
export interface CurvePoint {
  workers: number;
  chains: number;
  chainsPerSec: number;
  /** CPU the worker processes spent in the timed phase, in core-seconds per wall second. */
  workerCpuBusy: number;
  /** CPU the PostgreSQL server (postmaster and its backends) spent, in core-seconds per wall second. */
  serverCpuBusy: number;
  /** Committed transactions per chain (pg_stat_database, workers' start and stop included). */
  commitsPerChain: number;
  /** What held this point back, judged from the CPU figures (see {@link limitOf}). */
  limit: string;
}

/**
 * The likely limit of a point: the workers' CPU when each worker process is near one busy core,
 * the server's when it is near the machine's cores less the workers', else the latency of
 * commits (each waits for its WAL flush) since nobody is short of CPU.
 */
export function limitOf(workers: number, workerCpuBusy: number, serverCpuBusy: number, cores: number): string {
  if (workerCpuBusy >= 0.8 * workers) return "workers' CPU";
  if (workerCpuBusy + serverCpuBusy >= 0.8 * cores) return 'the machine\'s CPU (workers and server together)';
  if (serverCpuBusy >= 0.8) return "server CPU";
  return 'commit latency (no process is CPU-bound)';
}

const SCRIPT = fileURLToPath(new URL('./chain-worker.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TIMEOUT_MS = 300_000;

async function readCommits(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ n: string }>('select xact_commit::text as n from pg_stat_database where datname = current_database()');
  return Number(rows[0]?.n ?? 0);
}

interface WorkerChild {
  child: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  result: Promise<{ cpuMs: number }>;
}

function spawnWorker(url: string, schema: string, concurrency: number): WorkerChild {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, '--concurrency', String(concurrency)], {
    cwd: REPO_ROOT,
    env: { ...process.env, KILN_PG_URL: url, KILN_BENCH_SCHEMA: schema },
  });
  child.stderr.pipe(process.stderr);
  let stdout = '';
  const ready = new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      stdout += `${line}\n`;
      if (line === 'READY') resolve();
    });
    child.once('exit', (code) => reject(new Error(`chain worker exited with ${code} before it was ready`)));
  });
  const result = new Promise<{ cpuMs: number }>((resolve, reject) => {
    child.once('close', (code) => {
      const parsed = parseResultLine(stdout) as { cpuMs: number } | undefined;
      if (code === 0 && parsed) resolve(parsed);
      else reject(new Error(`chain worker exited with ${code} and ${parsed ? 'a' : 'no'} result line`));
    });
  });
  ready.catch(() => {});
  return { child, ready, result };
}

async function waitForSucceeded(admin: pg.Client, schema: string, total: number): Promise<void> {
  const deadline = performance.now() + TIMEOUT_MS;
  for (;;) {
    const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from "${schema}".runs where status = 'succeeded'`);
    if ((rows[0]?.n ?? 0) >= total) return;
    if (performance.now() > deadline) throw new Error(`only ${rows[0]?.n}/${total} chains succeeded after ${TIMEOUT_MS} ms`);
    await delay(20);
  }
}

/** Measures one point: `workers` processes, `chains` chains submitted in bulk into a fresh schema. */
async function measurePoint(url: string, admin: pg.Client, postmasterPid: number, workers: number, chains: number, concurrency: number): Promise<CurvePoint> {
  const schema = `kiln_bench_curve_${workers}_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-curve-'));
  const store = createPostgresStore({ connectionString: url, schema });
  await store.migrate();
  // The submitter: the same pipeline, no worker of its own.
  const kiln = createKiln({ store, artifacts: createFsArtifactStore({ root: dir }), pipelines: [benchPipeline(concurrency)] });
  const submit = (count: number, offset: number): Promise<void> =>
    submitHeads(SubmitMode.Bulk, count, offset, { one: (n) => kiln.submit(PIPELINE, { n }), many: (ns) => kiln.submitMany(PIPELINE, ns.map((n) => ({ input: { n } }))) });
  const children = Array.from({ length: workers }, () => spawnWorker(url, schema, concurrency));
  try {
    await Promise.all(children.map((c) => c.ready));
    const warmup = warmupRunsFor(chains);
    await submit(warmup, 0);
    await waitForSucceeded(admin, schema, warmup);
    const commits0 = await readCommits(admin);
    const server0 = serverCpuSeconds(postmasterPid);
    for (const c of children) c.child.stdin.write('mark\n');
    const t0 = performance.now();
    await submit(chains, warmup);
    await waitForSucceeded(admin, schema, warmup + chains);
    const elapsedS = (performance.now() - t0) / 1_000;
    const server1 = serverCpuSeconds(postmasterPid);
    for (const c of children) c.child.stdin.end('stop\n');
    const cpu = await Promise.all(children.map((c) => c.result));
    await store.close();
    // Statistics reach pg_stat_database when each backend exits or within a second while busy.
    await delay(1_500);
    const commits1 = await readCommits(admin);
    const workerCpuBusy = Math.round((cpu.reduce((sum, c) => sum + c.cpuMs, 0) / 1_000 / elapsedS) * 100) / 100;
    const serverCpuBusy = Math.round(((server1 - server0) / elapsedS) * 100) / 100;
    return {
      workers,
      chains,
      chainsPerSec: Math.round((chains / elapsedS) * 10) / 10,
      workerCpuBusy,
      serverCpuBusy,
      commitsPerChain: Math.round(((commits1 - commits0) / chains) * 100) / 100,
      limit: limitOf(workers, workerCpuBusy, serverCpuBusy, availableParallelism()),
    };
  } finally {
    for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGKILL');
    await store.close().catch(() => {});
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the curve on the server at `url`; one point per entry of `counts`. */
export async function measureWorkerCurve(url: string, counts: readonly number[], chains: number, concurrency: number): Promise<CurvePoint[]> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const postmasterPid = await postmasterPidOf(url);
    if (postmasterPid === undefined) throw new Error('the worker curve reads the server\'s CPU from /proc: run it on the PostgreSQL server\'s machine, with its data directory readable');
    const points: CurvePoint[] = [];
    for (const workers of counts) {
      const point = await measurePoint(url, admin, postmasterPid, workers, chains, concurrency);
      console.log(`postgres, ${workers} worker process(es): ${point.chainsPerSec} chains/s, workers' CPU ${point.workerCpuBusy} cores, server CPU ${point.serverCpuBusy} cores, ${point.commitsPerChain} commits/chain; limit: ${point.limit}`);
      points.push(point);
    }
    return points;
  } finally {
    await admin.end();
  }
}
