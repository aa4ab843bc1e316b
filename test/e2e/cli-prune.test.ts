/**
 * `kiln prune` as a real process on a SQLite store file and real artifact files: runs made through
 * the store with a clock weeks in the past are counted by `--dry-run` (nothing changes), deleted
 * by `kiln prune` per kiln.yaml's `retention:` (the queued and the young run stay, `kiln verify`
 * finds nothing wrong), and an artifact only a pruned dead-lettered run referenced then falls to
 * `kiln gc`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import type { JobSpec } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { builtinPipelines } from '../../src/pipelines/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { cleanEnv, runKiln } from './kiln-process.ts';

const E2E_TIMEOUT_MS = 90_000;
const DAY = 86_400_000;

/** A stage job of demo.sleep. */
function stage(name: string): JobSpec {
  return { stage: name, queue: `demo.sleep.${name}`, kind: 'stage', maxAttempts: 1, priority: 0 };
}

/** Claims the one job on demo.sleep's `name` queue. */
async function claim(store: Store, name: string) {
  const [claimed] = await store.jobs.claim([{ queue: `demo.sleep.${name}`, workerId: 'w', limit: 1, leaseMs: 30_000 }]);
  assert.ok(claimed, `a job on ${name}`);
  return { jobId: claimed.job.id, token: claimed.job.leaseToken ?? '' };
}

/**
 * In the store file at `dbPath`, `daysAgo` days back: a demo.sleep run through all three stages,
 * and optionally a dead-lettered one whose prepare output names `artifact`, a queued one (last:
 * a later call's claim would take its job) and a remembered request. Returns the run ids.
 */
async function pastRuns(dbPath: string, root: string, daysAgo: number, extras: { artifact?: string } = {}): Promise<string[]> {
  const clock = createFakeClock(Date.now() - daysAgo * DAY);
  const store = createSqliteStore({ path: dbPath, clock });
  try {
    await store.migrate();
    const kiln = createKiln({ store, artifacts: createFsArtifactStore({ root }), pipelines: builtinPipelines, clock });
    const ids: string[] = [];
    ids.push((await kiln.submit('demo.sleep', { delayMs: daysAgo })).run.id);
    const steps = [['prepare', 'process'], ['process', 'finish'], ['finish', null]] as const;
    for (const [name, next] of steps) {
      const [result] = await store.jobs.commit([{ type: 'complete', lease: await claim(store, name), output: { done: name }, durationMs: 1, next: next === null ? null : stage(next) }]);
      assert.equal(result?.outcome, 'committed');
    }
    if (extras.artifact === undefined) return ids;
    ids.push((await kiln.submit('demo.sleep', { delayMs: daysAgo + 1 })).run.id);
    await store.jobs.commit([{ type: 'complete', lease: await claim(store, 'prepare'), output: { artifact: extras.artifact }, durationMs: 1, next: stage('process') }]);
    const error = { class: 'transient' as const, code: 'FLAKY', message: 'gave up' };
    await store.jobs.commit([{ type: 'fail', lease: await claim(store, 'process'), error, durationMs: 1, decision: { action: 'dead_letter', rollback: null } }]);
    ids.push((await kiln.submit('demo.sleep', { delayMs: daysAgo + 2 })).run.id);
    await store.requests.remember({ scope: 'test', key: 'k', requestHash: 'h', value: null });
    return ids;
  } finally {
    await store.close();
  }
}

/** Status of each run id in the file, `gone` for the deleted ones. */
function statuses(dbPath: string, ids: readonly string[]): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const select = db.prepare<[string], { status: string }>('SELECT status FROM runs WHERE id = ?');
    return ids.map((id) => select.get(id)?.status ?? 'gone');
  } finally {
    db.close();
  }
}

test('kiln prune --dry-run counts, kiln prune deletes what retention no longer keeps, and gc then takes the artifact', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-cli-prune-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'p.db');
  const root = join(dir, 'kiln-data', 'artifacts');
  const kiln = (...args: string[]) => runKiln([...args, '--db', 'p.db'], dir, cleanEnv(), 30_000);
  const { ref: artifact } = await createFsArtifactStore({ root }).put(new TextEncoder().encode('only a dead letter needs me'));

  // The young run first: the old queued run's job would otherwise be the one its claim takes.
  const [youngSucceeded] = await pastRuns(dbPath, root, 1);
  const [oldSucceeded, oldDead, oldQueued] = await pastRuns(dbPath, root, 40, { artifact });
  const runs = [oldSucceeded!, oldDead!, oldQueued!, youngSucceeded!];
  assert.deepEqual(statuses(dbPath, runs), ['succeeded', 'dead_lettered', 'queued', 'succeeded']);

  const kept = await kiln('gc', '--dry-run', '--grace', '0');
  assert.equal(kept.code, 0, kept.stderr);
  assert.doesNotMatch(kept.stdout, new RegExp(artifact), 'a dead-lettered run may be replayed: its artifact is referenced');

  const dry = await kiln('prune', '--dry-run', '--json');
  assert.equal(dry.code, 0, dry.stderr);
  const expected = { runs: 2, stageRecords: 6, ledgerEntries: 4, jobs: 1, attempts: 1, requests: 1 };
  assert.deepEqual(JSON.parse(dry.stdout), { dryRun: true, ...expected });
  assert.deepEqual(statuses(dbPath, runs), ['succeeded', 'dead_lettered', 'queued', 'succeeded'], 'a dry run deletes nothing');

  const pruned = await kiln('prune');
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.match(pruned.stdout, /^retention: succeeded 7d, failed and dead-lettered 30d, cancelled and superseded 30d, requests 30d$/m);
  assert.match(pruned.stdout, /^runs\s+2$/m);
  assert.match(pruned.stdout, /^ledger entries\s+4$/m);
  assert.match(pruned.stdout, /^request records\s+1$/m);
  assert.deepEqual(statuses(dbPath, runs), ['gone', 'gone', 'queued', 'succeeded']);

  const audit = await kiln('verify');
  assert.equal(audit.code, 0, `the store keeps its invariants after a prune: ${audit.stdout}${audit.stderr}`);

  const again = await kiln('prune', '--json');
  assert.deepEqual(JSON.parse(again.stdout), { dryRun: false, runs: 0, stageRecords: 0, ledgerEntries: 0, jobs: 0, attempts: 0, requests: 0 });

  const gc = await kiln('gc', '--grace', '0');
  assert.equal(gc.code, 0, gc.stderr);
  assert.match(gc.stdout, new RegExp(`^removed ${artifact} `, 'm'), 'the pruned run was its last reference');
});

test('kiln prune follows kiln.yaml: a kind kept forever stays, a shorter period takes young runs too', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-cli-prune-yaml-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'p.db');
  const root = join(dir, 'kiln-data', 'artifacts');
  const { ref: artifact } = await createFsArtifactStore({ root }).put(new TextEncoder().encode('x'));
  const [young] = await pastRuns(dbPath, root, 2);
  const [old, dead] = await pastRuns(dbPath, root, 40, { artifact });
  await writeFile(join(dir, 'kiln.yaml'), ['retention:', '  succeeded: 1d', '  failed: forever', '  batchSize: 1'].join('\n'));

  const pruned = await runKiln(['prune', '--json', '--db', 'p.db'], dir, cleanEnv(), 30_000);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.equal((JSON.parse(pruned.stdout) as { runs: number }).runs, 2, 'two batches of one');
  assert.deepEqual(statuses(dbPath, [old!, dead!, young!]), ['gone', 'dead_lettered', 'gone']);
});
