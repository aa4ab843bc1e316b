/**
 * The crash-point chaos harness (`npm run chaos`, and the e2e chaos test): one API process and N
 * `kiln worker` processes on one store, runs of `chaos.crash` (chaos-pipeline.ts) submitted over
 * HTTP, and faults placed, not hoped for: every worker is spawned with a crash plan drawn from the
 * seed (`KILN_CRASH_PLAN`, see src/engine/crash-points.ts: which point, at which pass) and SIGKILLs
 * itself there; it is respawned with the next plan. The plans hold `perPoint` kills of each crash
 * point, so a run of the harness hits each point exactly that many times. Between kills the store
 * restarts (SQLite: SIGKILL of the API process; PostgreSQL: `pg_ctl restart`; Redis: SIGKILL of
 * redis-server and a start on its AOF). Then the checks: every run ended as its input said
 * (none lost), every stage and compensation once in the ledger (none duplicated), one publication
 * per run pointing at the committed attempt's artifact, no job left (none stuck). Fault scenarios
 * (faults/index.ts) run afterwards and add to the report.
 */
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRASH_PLAN_ENV, CRASH_POINTS, type CrashPlan, type CrashPointName } from '../../../src/engine/crash-points.ts';
import type { Job, Run } from '../../../src/core/model.ts';
import type { Store } from '../../../src/core/ports/store.ts';
import { cleanEnv, freePort, killIfRunning, spawnKiln, waitUntil, type KilnProcess } from '../../e2e/kiln-process.ts';
import { e2eStoreCase, type QrE2eStore } from '../../e2e/qr-stores.ts';
import { canRestartPostgres, restartPostgres } from '../postgres-cluster.ts';
import { canRestartRedis, startStoppedRedis, stopRedisForOutage } from '../redis-server.ts';
import { createPrng, type Prng } from '../simulation/prng.ts';
import { CHAOS_PIPELINE, CHAOS_PROFILE, chaosSubject, type ChaosInput } from './chaos-pipeline.ts';
import { faultScenarios, type FaultReport } from './faults/index.ts';

export type ChaosStore = 'sqlite' | 'postgres' | 'redis';

/** What one harness run does. */
export interface ChaosOptions {
  seed: number;
  store: ChaosStore;
  /** Kills planned at each crash point. */
  perPoint: number;
  /** Worker processes kept running. @default 4 */
  workers?: number;
  /** Store restarts, spread over the kills. @default 3 */
  restarts?: number;
  /** Run the fault scenarios of faults/index.ts afterwards. @default true */
  faults?: boolean;
  /** The highest pass a plan may name (drawn from 1..maxPass). @default 3 */
  maxPass?: number;
  /** Give up placing the planned kills after this long. @default 20 min */
  chaosTimeoutMs?: number;
  log?: (line: string) => void;
}

/** What the harness found. `violations` empty means it passed. */
export interface ChaosReport {
  seed: number;
  store: ChaosStore;
  runs: number;
  planned: Record<CrashPointName, number>;
  kills: Record<CrashPointName, number>;
  restarts: number;
  /** Restarts not made: the server is someone else's (`KILN_PG_URL`, `KILN_REDIS_URL`). */
  restartsSkipped: number;
  /** Workers that exited 5 (STORE_UNAVAILABLE) because they started while the store restarted. */
  startsRefused: number;
  /** Runs missing, or a stage / compensation missing from a run's ledger. */
  lost: number;
  /** Ledger entries beyond one per stage and kind. */
  duplicated: number;
  /** Subjects with more than one publication of the profile. */
  duplicatePublications: number;
  /** Publications pointing at an artifact other than the committed attempt's. */
  wrongPublications: number;
  /** Runs not ended, ended other than their input says, or jobs left over. */
  stuck: number;
  /** Attempts counted over all stage jobs (above the stage count: redeliveries happened). */
  attempts: number;
  stages: number;
  workersSpawned: number;
  wallMs: number;
  faults: FaultReport[];
  violations: string[];
}

/** Runs submitted while a worker is to be killed at most this many jobs ahead of the workers. */
const MAX_BACKLOG_JOBS = 60;
const SUBMIT_BATCH = 10;
/** One run in this many fails at `check`, so compensations run. */
const FAIL_EVERY = 3;
const DRAIN_TIMEOUT_MS = 240_000;

/** `kiln`'s exit code for STORE_UNAVAILABLE (src/cli/exit-codes.ts). */
const STORE_UNAVAILABLE_EXIT = 5;

const PIPELINE_MODULE = fileURLToPath(new URL('./chaos-pipeline.ts', import.meta.url));

const zeroCounts = (): Record<CrashPointName, number> => Object.fromEntries(CRASH_POINTS.map((p) => [p, 0])) as Record<CrashPointName, number>;

/** The plans of one harness run: `perPoint` per point, each at a pass in 1..maxPass, shuffled by the seed. */
export function crashSchedule(prng: Prng, perPoint: number, maxPass: number): Omit<CrashPlan, 'file'>[] {
  const plans = CRASH_POINTS.flatMap((point) => Array.from({ length: perPoint }, () => ({ point, pass: prng.between(1, maxPass) })));
  for (let i = plans.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [plans[i], plans[j]] = [plans[j] as (typeof plans)[number], plans[i] as (typeof plans)[number]];
  }
  return plans;
}

/** All runs, paging by id. */
async function allRuns(store: Store): Promise<Run[]> {
  const out: Run[] = [];
  for (let before: string | undefined; ; ) {
    const page = await store.reads.listRuns({ limit: 1_000, ...(before ? { before } : {}) });
    out.push(...page);
    if (page.length < 1_000) return out;
    before = page.at(-1)?.id;
  }
}

/** The jobs still in the store: up to 100 of each live state, and the dead ones (one per failed run expected). */
async function jobsLeft(store: Store, runs: number): Promise<Job[]> {
  const live = await Promise.all((['ready', 'leased', 'parked'] as const).map((state) => store.reads.listJobs({ state, limit: 100 })));
  return [...live.flat(), ...(await store.reads.listJobs({ state: 'dead', limit: runs + 100 }))];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The ledger a run must end with: `stage/kind` once each. */
function expectedLedger(fail: boolean): string[] {
  return fail ? ['publish/rollback', 'publish/stage', 'write/rollback', 'write/stage'] : ['check/stage', 'publish/stage', 'write/stage'];
}

/** Runs the harness; never throws for a violation (see `violations`), only for a broken setup. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const workerCount = options.workers ?? 4;
  const restartCount = options.restarts ?? 3;
  const prng = createPrng(options.seed);
  const schedule = crashSchedule(prng, options.perPoint, options.maxPass ?? 3);
  const planned = zeroCounts();
  for (const p of schedule) planned[p.point]++;
  // Restarts after these many kills, spread evenly over the schedule.
  const restartAt = Array.from({ length: restartCount }, (_, i) => Math.round((schedule.length * (i + 1)) / (restartCount + 1)));

  const storeCase = e2eStoreCase(options.store);
  if (storeCase.skip !== undefined) throw new Error(`store ${options.store} is not available here: ${storeCase.skip}`);
  const dir = await mkdtemp(join(tmpdir(), 'kiln-chaos-'));
  const procs: KilnProcess[] = [];
  // Interrupted (Ctrl-C, a timeout), the harness takes its kiln processes with it.
  const killAll = (): void => procs.forEach(killIfRunning);
  process.once('exit', killAll);
  let e2e: QrE2eStore | undefined;
  try {
    e2e = await storeCase.open(dir);
    const report = await chaos(options, { dir, e2e, procs, log, workerCount, schedule, planned, restartAt });
    if (options.faults ?? true) {
      for (const scenario of faultScenarios) {
        log(`fault scenario ${scenario.name}`);
        const fault = await scenario.run({ seed: options.seed, store: options.store, log });
        report.faults.push(fault);
        for (const key of ['lost', 'duplicated', 'duplicatePublications', 'stuck'] as const) {
          if (fault[key] !== 0) report.violations.push(`fault ${fault.name}: ${key} ${fault[key]}`);
        }
      }
    }
    report.wallMs = Date.now() - started;
    return report;
  } finally {
    process.removeListener('exit', killAll);
    procs.forEach(killIfRunning);
    await Promise.all(procs.map((p) => p.exited));
    await e2e?.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}

interface Scene {
  dir: string;
  e2e: QrE2eStore;
  procs: KilnProcess[];
  log: (line: string) => void;
  workerCount: number;
  schedule: Omit<CrashPlan, 'file'>[];
  planned: Record<CrashPointName, number>;
  restartAt: number[];
}

async function chaos(options: ChaosOptions, scene: Scene): Promise<ChaosReport> {
  const { dir, e2e, procs, log, workerCount, schedule, planned } = scene;
  const { store } = e2e;
  const violations: string[] = [];
  const hitsFile = join(dir, 'crash-hits.log');
  await writeFile(hitsFile, '');
  await writeFile(join(dir, 'kiln.yaml'), 'worker:\n  pollMs: 50\n  reapMs: 200\n');
  const env = cleanEnv({ ...e2e.env, KILN_LOG_LEVEL: 'warn', KILN_PIPELINES: PIPELINE_MODULE });

  // The API process (killed and started again for a SQLite "store restart").
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let api: KilnProcess;
  const startApi = async (): Promise<void> => {
    api = spawnKiln(['serve', '--no-worker', '--port', String(port), ...e2e.args], dir, env);
    procs.push(api);
    await waitUntil('the API answers /healthz', async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 60_000, 100).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${api.output()}`);
    });
  };
  await startApi();

  // Workers: each slot runs one process at a time, spawned with the next plan of the schedule.
  const plansLeft = [...schedule];
  let kills = 0;
  let workersSpawned = 0;
  let stopping = false;
  const killsBy = zeroCounts();
  const restartsDone: Promise<void>[] = [];
  let restarts = 0;
  let restartsSkipped = 0;
  let startsRefused = 0;
  let restartChain: Promise<void> = Promise.resolve();
  const restartStore = async (): Promise<void> => {
    const t0 = Date.now();
    const after = kills;
    if (options.store === 'sqlite') {
      api.child.kill('SIGKILL');
      await api.exited;
      await startApi();
    } else if (options.store === 'postgres') {
      if (!canRestartPostgres()) return void restartsSkipped++;
      await restartPostgres();
    } else {
      if (!canRestartRedis()) return void restartsSkipped++;
      await stopRedisForOutage();
      await sleep(300);
      await startStoppedRedis();
    }
    restarts++;
    log(`store restart ${restarts} (${options.store}) after ${after} kills, ${Date.now() - t0} ms`);
  };

  const allKilled = new Promise<void>((resolve) => {
    const onKill = (): void => {
      if (kills === schedule.length) resolve();
    };
    const spawnWorker = (slot: number): void => {
      if (stopping) return;
      const next = plansLeft.shift();
      const plan = next === undefined ? undefined : { ...next, file: hitsFile };
      const id = `w${slot}-${++workersSpawned}`;
      const p = spawnKiln(['worker', '--worker-id', id, ...e2e.args], dir, plan ? { ...env, [CRASH_PLAN_ENV]: JSON.stringify(plan) } : env);
      procs.push(p);
      void p.exited.then(async (status) => {
        if (stopping) return;
        const pid = p.child.pid;
        const hit = (await readFile(hitsFile, 'utf8')).split('\n').find((line) => line.endsWith(` ${pid}`));
        if (plan && status.signal === 'SIGKILL' && hit !== undefined) {
          kills++;
          killsBy[plan.point]++;
          if (scene.restartAt.includes(kills)) {
            restartChain = restartChain.then(restartStore).catch((err: unknown) => void violations.push(`store restart failed: ${String(err)}`));
            restartsDone.push(restartChain);
          }
          onKill();
        } else if (status.code === STORE_UNAVAILABLE_EXIT && p.output().includes('STORE_UNAVAILABLE')) {
          // A worker starting while the store restarts cannot open it and exits 5 (the CLI's
          // documented answer; a supervisor starts it again): no violation, its plan goes back.
          if (next !== undefined) plansLeft.unshift(next);
          startsRefused++;
          log(`worker ${id} could not open the store while it restarted (exit 5); started again`);
        } else {
          // Its plan goes back to the schedule, so the planned kills still all happen.
          if (next !== undefined) plansLeft.unshift(next);
          const line = `worker ${id} exited unplanned (${JSON.stringify(status)}, plan ${JSON.stringify(plan)})\n${p.output().slice(-2_000)}`;
          log(line);
          violations.push(line);
        }
        spawnWorker(slot);
      });
    };
    for (let slot = 0; slot < workerCount; slot++) spawnWorker(slot);
    if (schedule.length === 0) resolve();
  });

  // Submits runs in batches while kills are due, keeping the backlog short so the drain is quick.
  let submitted = 0;
  const submitOne = async (n: number): Promise<void> => {
    const input: ChaosInput = { n, fail: n % FAIL_EVERY === FAIL_EVERY - 1 };
    for (;;) {
      const res = await fetch(`${base}/v1/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `chaos-${n}` },
        body: JSON.stringify({ pipeline: CHAOS_PIPELINE, input }),
      }).catch(() => undefined);
      lastSubmit = res === undefined ? 'refused' : String(res.status);
      if (res?.status === 202 || res?.status === 200) return;
      // 503 while the store restarts, refused while the API does: the same key again.
      if (res && res.status !== 503) violations.push(`submit ${n} answered ${res.status}: ${await res.text()}`);
      if (res && res.status !== 503) return;
      await sleep(100);
    }
  };
  let killsDone = false;
  const chaosTimeoutMs = options.chaosTimeoutMs ?? 1_200_000;
  const chaosStart = Date.now();
  void allKilled.then(() => (killsDone = true));
  let lastSubmit = 'none yet';
  const progress = setInterval(() => log(`progress: ${kills}/${schedule.length} kills, ${submitted} runs submitted, last submit: ${lastSubmit}`), 10_000);
  while (!killsDone && Date.now() - chaosStart < chaosTimeoutMs) {
    // Jobs to do (ready or leased): the dead `check` jobs of failed runs stay, and are not work.
    const backlog = await Promise.all((['ready', 'leased'] as const).map((state) => store.reads.listJobs({ state, limit: MAX_BACKLOG_JOBS }))).then(
      (lists) => lists.flat().length,
      () => MAX_BACKLOG_JOBS,
    );
    if (backlog < MAX_BACKLOG_JOBS) {
      const first = submitted;
      submitted += SUBMIT_BATCH;
      await Promise.all(Array.from({ length: SUBMIT_BATCH }, (_, i) => submitOne(first + i)));
    } else {
      await sleep(50);
    }
  }
  clearInterval(progress);
  log(`kills placed: ${kills} of ${schedule.length} in ${Date.now() - chaosStart} ms; ${submitted} runs submitted; draining`);
  await restartChain;
  await Promise.all(restartsDone);
  const drainStart = Date.now();

  // Drain: every run ends (workers still holding an unhit plan may die yet; they respawn plan-free).
  let runs: Run[] = [];
  let drained = false;
  try {
    runs = await waitUntil(
      'every run to end',
      async () => {
        const all = await allRuns(store);
        return all.length >= submitted && all.every((r) => r.status !== 'queued' && r.status !== 'running') ? all : undefined;
      },
      DRAIN_TIMEOUT_MS,
      500,
    );
    drained = true;
  } catch {
    runs = await allRuns(store);
  }
  stopping = true;
  log(`drained in ${Date.now() - drainStart} ms`);

  // The checks.
  const c = { lost: 0, duplicated: 0, duplicatePublications: 0, wrongPublications: 0, stuck: 0, attempts: 0, stages: 0 };
  const byN = new Map<number, Run[]>();
  for (const run of runs) {
    const n = (run.input as unknown as ChaosInput).n;
    byN.set(n, [...(byN.get(n) ?? []), run]);
  }
  for (let n = 0; n < submitted; n++) {
    const found = byN.get(n) ?? [];
    if (found.length === 0) c.lost++;
    if (found.length > 1) c.duplicated += found.length - 1;
  }
  if (!drained) violations.push(`runs still queued or running after ${DRAIN_TIMEOUT_MS} ms`);
  for (const run of runs) {
    const { fail } = run.input as unknown as ChaosInput;
    const want = fail ? 'failed' : 'succeeded';
    if (run.status !== want) {
      c.stuck++;
      violations.push(`run ${run.id} (fail=${fail}) ended ${run.status}, not ${want}`);
    }
    const ledger = await store.reads.readLedger(run.id);
    const seen = new Map<string, number>();
    for (const e of ledger) seen.set(`${e.stage}/${e.kind}`, (seen.get(`${e.stage}/${e.kind}`) ?? 0) + 1);
    for (const key of expectedLedger(fail)) {
      const count = seen.get(key) ?? 0;
      if (count === 0) c.lost++;
      if (count > 1) c.duplicated += count - 1;
      if (count !== 1) violations.push(`run ${run.id}: ${key} ${count} times in the ledger`);
    }
    const extra = [...seen.keys()].filter((k) => !expectedLedger(fail).includes(k));
    if (extra.length > 0) violations.push(`run ${run.id}: unexpected ledger entries ${extra.join(', ')}`);
    const publications = (await store.publications.list(chaosSubject(run.id))).filter((p) => p.profile === CHAOS_PROFILE);
    if (publications.length > 1) c.duplicatePublications += publications.length - 1;
    const written = ledger.find((e) => e.stage === 'write' && e.kind === 'stage')?.output as { ref?: string } | undefined;
    if (publications.length === 0 || publications[0]?.artifactRef !== written?.ref) {
      c.wrongPublications++;
      violations.push(`run ${run.id}: publication ${JSON.stringify(publications)} is not of the committed artifact ${written?.ref}`);
    }
    const detail = await store.reads.getRun(run.id);
    c.attempts += detail?.stages.reduce((sum, s) => sum + s.attempts, 0) ?? 0;
    c.stages += detail?.stages.length ?? 0;
  }
  // A failing run keeps its failed `check` job, dead (for inspection); any other job is left over.
  const failedRuns = new Set(runs.filter((r) => (r.input as unknown as ChaosInput).fail).map((r) => r.id));
  const leftJobs = (await jobsLeft(store, runs.length)).filter((j) => !(j.state === 'dead' && j.stage === 'check' && j.kind === 'stage' && failedRuns.has(j.runId)));
  c.stuck += leftJobs.length;
  if (leftJobs.length > 0) violations.push(`${leftJobs.length} jobs left: ${leftJobs.slice(0, 5).map((j) => `${j.id} ${j.state}`).join(', ')}`);
  for (const point of CRASH_POINTS) {
    if (killsBy[point] < planned[point]) violations.push(`crash point ${point} hit ${killsBy[point]} times, planned ${planned[point]}`);
  }
  for (const key of ['lost', 'duplicated', 'duplicatePublications'] as const) if (c[key] > 0) violations.push(`${key} ${c[key]}`);

  return {
    seed: options.seed,
    store: options.store,
    runs: runs.length,
    planned,
    kills: killsBy,
    restarts,
    restartsSkipped,
    startsRefused,
    ...c,
    workersSpawned,
    wallMs: 0,
    faults: [],
    violations,
  };
}

/** The one summary `npm run chaos` prints. */
export function formatChaosReport(r: ChaosReport): string {
  const lines = [
    `chaos: seed ${r.seed}, store ${r.store}, ${(r.wallMs / 1000).toFixed(1)} s`,
    `  runs ${r.runs}, workers spawned ${r.workersSpawned}, attempts ${r.attempts} for ${r.stages} stage jobs`,
    `  kills per crash point: ${CRASH_POINTS.map((p) => `${p} ${r.kills[p]}/${r.planned[p]}`).join(', ')}`,
    `  restarts ${r.restarts}${r.restartsSkipped > 0 ? ` (${r.restartsSkipped} skipped: the server is not this process's)` : ''}, worker starts refused by a restarting store ${r.startsRefused}`,
    `  lost ${r.lost}, duplicated ${r.duplicated}, duplicate publications ${r.duplicatePublications}, wrong publications ${r.wrongPublications}, stuck ${r.stuck}`,
  ];
  for (const f of r.faults) {
    const details = Object.entries(f.details).map(([k, v]) => `${k} ${v}`).join(', ');
    lines.push(`  fault ${f.name}: runs ${f.runs}, lost ${f.lost}, duplicated ${f.duplicated}, duplicate publications ${f.duplicatePublications}, stuck ${f.stuck}${details ? `; ${details}` : ''}`);
  }
  lines.push(r.violations.length === 0 ? 'ok' : `FAILED: ${r.violations.length} violations\n${r.violations.slice(0, 20).map((v) => `  - ${v}`).join('\n')}`);
  return lines.join('\n');
}
