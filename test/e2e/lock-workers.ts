/**
 * Stage locks across real processes: two `kiln worker` processes share one store (a SQLite file,
 * or a PostgreSQL schema) and serve `locks.render` (test/fixtures/lock-pipeline.ts), whose stage
 * takes the lock `render:{{input.assetId}}`. The stage records its own intervals; the scenarios
 * here check them, and the store's lock, from the outside:
 * - {@link fiftyRunsNeverOverlap}: 50 runs with one key, the recorded intervals never overlap and
 *   the fences grow with them;
 * - {@link killedOwnerLosesLock}: the lock owner is SIGKILLed mid-stage (known to be running from
 *   its marker); the other worker takes the lock once its TTL ran out, with a higher fence, and
 *   the dead owner's late renew and release are refused.
 * Conditions are waited for with timeouts, never with sleeps.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { dropSchema } from '../integration/http-stores.ts';
import { createSchemaName, sharedPostgres } from '../support/postgres-cluster.ts';
import type { Kiln } from '../../src/engine/kiln-types.ts';
import lockPipeline from '../fixtures/lock-pipeline.ts';
import { cleanEnv, killIfRunning, spawnKiln, waitUntil, type KilnProcess } from './kiln-process.ts';

/** The fixture module the workers load with `--pipelines`. */
const FIXTURE = fileURLToPath(new URL('../fixtures/lock-pipeline.ts', import.meta.url));
const PIPELINE = 'locks.render';
/** Lock TTL from kiln.yaml (`worker.lock.ttl`); the stage heartbeats every 250 ms. */
export const LOCK_TTL_MS = 2_000;
/** Scheduling slack on a loaded 2-core machine. */
const SLACK_MS = 10_000;

/** Where the workers run and how the test reaches their store. */
export interface LockWorkspace {
  dir: string;
  /** The store's kind, as `worker.lock.provider` names it. */
  provider: 'sqlite' | 'postgres';
  /** Arguments selecting the store for `kiln worker`. */
  storeArgs: string[];
  /** Extra environment of the workers (e.g. `KILN_PG_SCHEMA`). */
  env: Record<string, string>;
  /** The test's own connection to the same store, migrated. */
  store: Store;
  /** Runs `fn` when the test ends, before everything deferred earlier (last in, first out). */
  defer(fn: () => Promise<unknown>): void;
}

/** What a scenario needs of its test. */
export interface LockTest {
  after(fn: () => Promise<void>): void;
  diagnostic(message: string): void;
}

/** One stage attempt as the stage recorded it. */
interface Interval {
  pid: number;
  worker: string;
  runId: string;
  attempt: number;
  fence: number;
  start: number;
  end?: number;
}

/**
 * A temp directory and a clean-up list for one test: `defer`red steps run when it ends, last in
 * first out (workers die before their store closes, the store closes before its folder goes).
 */
export async function workspaceBase(t: LockTest, prefix: string): Promise<{ dir: string; defer: LockWorkspace['defer'] }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const steps: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  t.after(async () => {
    for (const step of steps.reverse()) await step();
  });
  return { dir, defer: (fn) => void steps.push(fn) };
}

/** Two started workers `worker-a` and `worker-b` with the workspace's kiln.yaml; killed when the test ends. */
async function startWorkers(ws: LockWorkspace): Promise<Map<string, KilnProcess>> {
  await writeFile(
    join(ws.dir, 'kiln.yaml'),
    `worker:\n  pollMs: 50\n  reapMs: 200\n  lock:\n    provider: ${ws.provider}\n    ttl: ${LOCK_TTL_MS}ms\nlog:\n  level: warn\n`,
  );
  const env = cleanEnv({ ...ws.env, KILN_LOCK_TEST_DIR: ws.dir });
  const workers = new Map<string, KilnProcess>();
  for (const id of ['worker-a', 'worker-b']) {
    workers.set(id, spawnKiln(['worker', '--worker-id', id, '--pipelines', FIXTURE, '--config', 'kiln.yaml', ...ws.storeArgs], ws.dir, env));
  }
  ws.defer(async () => {
    for (const w of workers.values()) killIfRunning(w);
    await Promise.all([...workers.values()].map((w) => w.exited));
  });
  return workers;
}

/** The engine the test submits with (never started as a worker). */
function submitter(ws: LockWorkspace): Kiln {
  return createKiln({ store: ws.store, artifacts: createFsArtifactStore({ root: join(ws.dir, 'artifacts') }), pipelines: [lockPipeline] });
}

async function readLines(dir: string, file: string): Promise<Interval[]> {
  const text = await readFile(join(dir, file), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Interval);
}

/** Asserts that no two recorded intervals overlap and that fences grow with them; returns them by start. */
function assertSerial(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    const [prev, next] = [sorted[i - 1] as Interval, sorted[i] as Interval];
    assert.ok(next.start >= (prev.end ?? Infinity), `interval ${i} (pid ${next.pid}, start ${next.start}) began before ${i - 1} (pid ${prev.pid}) ended at ${prev.end}`);
    assert.ok(next.fence > prev.fence, `fence ${next.fence} after ${prev.fence}`);
  }
  return sorted;
}

/** Waits until every run ended and asserts each succeeded. */
async function assertAllSucceed(kiln: Kiln, runIds: readonly string[], timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const id of runIds) {
    const detail = await kiln.waitForRun(id, { timeoutMs: Math.max(1, deadline - Date.now()) });
    assert.equal(detail.run.status, 'succeeded', `run ${id} is ${detail.run.status}\n${output()}`);
  }
}

/** 50 runs with one lock key on two workers: the stages' own intervals never overlap. */
export async function fiftyRunsNeverOverlap(ws: LockWorkspace, t: LockTest): Promise<void> {
  const workers = await startWorkers(ws);
  const output = (): string => [...workers].map(([id, w]) => `--- ${id} ---\n${w.output()}`).join('\n');
  const kiln = submitter(ws);
  const runs = await kiln.submitMany(PIPELINE, Array.from({ length: 50 }, (_, i) => ({ input: { assetId: 'shared', sleepMs: 20, n: i } })));
  const startedAt = Date.now();
  await assertAllSucceed(kiln, runs.map((r) => r.run.id), 120_000, output);
  const intervals = await readLines(ws.dir, 'intervals.jsonl');
  assert.equal(intervals.length, 50, 'one recorded interval per run');
  assertSerial(intervals);
  const byWorker = new Map<string, number>();
  for (const i of intervals) byWorker.set(i.worker, (byWorker.get(i.worker) ?? 0) + 1);
  t.diagnostic(`50 runs in ${Date.now() - startedAt} ms; stages per worker: ${JSON.stringify(Object.fromEntries(byWorker))}`);
  assert.equal(byWorker.size, 2, `both workers took the lock in turn: ${JSON.stringify(Object.fromEntries(byWorker))}`);
  assert.equal(await ws.store.locks.get('render:shared'), null, 'the last holder released the lock');
  for (const w of workers.values()) w.child.kill('SIGTERM');
  for (const w of workers.values()) assert.deepEqual(await w.exited, { code: 0, signal: null }, output());
}

/** How long a stage holds the lock once the survivor runs it (see {@link killedOwnerLosesLock}). */
const SURVIVOR_STAGE_MS = 3_000;

/** The lock owner SIGKILLed mid-stage: the other worker takes the lock after its TTL, with a higher fence. */
export async function killedOwnerLosesLock(ws: LockWorkspace, t: LockTest): Promise<void> {
  const workers = await startWorkers(ws);
  const output = (): string => [...workers].map(([id, w]) => `--- ${id} ---\n${w.output()}`).join('\n');
  const kiln = submitter(ws);
  const key = 'render:crash';
  // After the crash each stage holds the lock for SURVIVOR_STAGE_MS: long enough that the checks
  // below (the dead owner's late renew and release) run while the survivor still holds it.
  const { run: long } = await kiln.submit(PIPELINE, { assetId: 'crash', sleepMs: SURVIVOR_STAGE_MS, firstSleepMs: 120_000 });
  // The stage is known to be running (and to hold the lock) once its marker is written.
  const marker = await waitUntil('the first stage to start', async () => (await readLines(ws.dir, 'markers.jsonl'))[0], 20_000).catch((err: unknown) =>
    assert.fail(`${String(err)}\n${output()}`),
  );
  const victim = workers.get(marker.worker);
  const survivorId = [...workers.keys()].find((id) => id !== marker.worker) ?? '';
  assert.ok(victim, `marker names one of our workers: ${marker.worker}`);
  const held = await ws.store.locks.get(key);
  assert.deepEqual([held?.owner, held?.fence], [marker.worker, marker.fence], 'the running stage holds the lock and was handed its fence');
  const token = (await ws.store.reads.getJob((await kiln.listJobs({ runId: long.id }))[0]?.id ?? ''))?.leaseToken ?? '';
  const { run: short } = await kiln.submit(PIPELINE, { assetId: 'crash', sleepMs: SURVIVOR_STAGE_MS });

  victim.child.kill('SIGKILL');
  assert.equal((await victim.exited).signal, 'SIGKILL');
  const last = await ws.store.locks.get(key);
  assert.equal(last?.owner, marker.worker, 'nobody takes the lock while it is live');
  const taken = await waitUntil(
    'the survivor to take the lock',
    async () => {
      const lock = await ws.store.locks.get(key);
      return lock?.owner === survivorId ? lock : undefined;
    },
    LOCK_TTL_MS + SLACK_MS,
    25,
  );
  t.diagnostic(`lock ${key}: fence ${last?.fence} (killed ${marker.worker}) -> ${taken.fence} (${survivorId}), taken ${taken.acquiredAt - (last?.expiresAt ?? 0)} ms after it expired`);
  assert.ok(taken.acquiredAt >= (last?.expiresAt ?? Infinity), 'taken only once the dead owner’s TTL ran out');
  assert.ok(taken.fence > (last?.fence ?? Infinity), 'with a higher fence');
  assert.deepEqual(await ws.store.locks.renew([{ key, token, ttlMs: LOCK_TTL_MS }]), [{ status: 'lost' }], 'the dead owner’s late renew is refused');
  assert.equal(await ws.store.locks.release(key, token), 'not_owner', 'its late release too');
  assert.equal((await ws.store.locks.get(key))?.owner, survivorId);

  await assertAllSucceed(kiln, [long.id, short.id], 30_000, output);
  const intervals = assertSerial(await readLines(ws.dir, 'intervals.jsonl'));
  assert.deepEqual(new Set(intervals.map((i) => i.worker)), new Set([survivorId]), 'only the survivor finished stages');
  assert.ok(intervals.every((i) => i.start >= (last?.expiresAt ?? Infinity)), 'no stage ran before the dead owner’s lock expired');
  workers.get(survivorId)?.child.kill('SIGTERM');
  assert.deepEqual(await workers.get(survivorId)?.exited, { code: 0, signal: null }, output());
}

/** A workspace on a fresh SQLite file. */
export async function sqliteWorkspace(t: LockTest): Promise<LockWorkspace> {
  const { dir, defer } = await workspaceBase(t, 'kiln-locks-sqlite-');
  const path = join(dir, 'kiln.db');
  const store = createSqliteStore({ path });
  defer(() => store.close());
  await store.migrate();
  return { dir, provider: 'sqlite', storeArgs: ['--db', path], env: {}, store, defer };
}

/** A workspace on a fresh schema of this process's PostgreSQL (dropped when the test ends). */
export async function postgresWorkspace(t: LockTest): Promise<LockWorkspace> {
  const { dir, defer } = await workspaceBase(t, 'kiln-locks-pg-');
  const { url } = await sharedPostgres();
  const schema = createSchemaName('kiln_lock_');
  defer(() => dropSchema(url, schema));
  const store = createPostgresStore({ connectionString: url, schema });
  defer(() => store.close());
  await store.migrate();
  return { dir, provider: 'postgres', storeArgs: ['--store', url], env: { KILN_PG_SCHEMA: schema }, store, defer };
}
