/**
 * `kiln verify` as a real process on a SQLite store file and real artifacts (the QR images inline
 * in the store file, the default; damaged through SQL): after real pipeline runs (demo.sleep
 * through a `kiln worker`, qr-code through `kiln qr`) it finds nothing
 * and exits 0; after every invariant is broken on purpose (verify-scenario.ts names them) it
 * lists exactly those, with their ids, and exits 1 — as text and as `--json`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import type { VerifyReport } from '../../src/engine/verify/verify-types.ts';
import { builtinPipelines } from '../../src/pipelines/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { FAR_PAST_MS, found, writeTemp, type ExpectedViolation } from '../integration/verify-scenario.ts';
import { cleanEnv, exitWithin, killIfRunning, runKiln, spawnKiln } from './kiln-process.ts';

const E2E_TIMEOUT_MS = 90_000;

/** Rows of the store file, read (or changed) behind the store's back. */
function withDb<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/**
 * A demo.sleep run whose job a worker claimed a day ago and never gave back (it crashed): made
 * through the store and the engine with a clock a day behind, as that worker's would have been.
 */
async function leaseLeftADayAgo(dbPath: string, root: string): Promise<string> {
  const clock = createFakeClock(Date.now() - FAR_PAST_MS);
  const store = createSqliteStore({ path: dbPath, clock });
  try {
    const kiln = createKiln({ store, artifacts: createFsArtifactStore({ root }), pipelines: builtinPipelines, clock });
    await kiln.submit('demo.sleep', { delayMs: 0 });
    const [claimed] = await store.jobs.claim([{ queue: 'demo.sleep.prepare', workerId: 'crashed-worker', limit: 1, leaseMs: 30_000 }]);
    assert.ok(claimed);
    return claimed.job.id;
  } finally {
    await store.close();
  }
}

test('kiln verify finds nothing after real runs, then each invariant broken on purpose, and exits 1', { timeout: E2E_TIMEOUT_MS }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-cli-verify-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'v.db');
  const root = join(dir, 'kiln-data', 'artifacts');
  const kiln = (...args: string[]) => runKiln([...args, '--db', 'v.db'], dir, cleanEnv(), 30_000);

  // Real work: two QR codes (publications, cache entries, artifacts) and a demo.sleep run through a worker.
  for (const [text, file] of [
    ['verify A', 'a.png'],
    ['verify B', 'b.svg'],
  ] as const) {
    const qr = await kiln('qr', text, '-o', file);
    assert.equal(qr.code, 0, qr.stderr);
  }
  const worker = spawnKiln(['worker', '--db', 'v.db', '--queues', 'demo.sleep.prepare,demo.sleep.process,demo.sleep.finish'], dir);
  t.after(() => killIfRunning(worker));
  const submitted = await kiln('submit', 'demo.sleep', '{"delayMs":0}', '--wait', '20000', '--json');
  assert.equal(submitted.code, 0, submitted.stderr);
  const sleepRunId = (JSON.parse(submitted.stdout) as { id: string }).id;
  worker.child.kill('SIGTERM');
  assert.equal((await exitWithin(worker, 'the worker to stop', 15_000)).code, 0, worker.output());

  const healthy = await kiln('verify');
  assert.equal(healthy.code, ExitCode.ok, healthy.stdout + healthy.stderr);
  assert.match(healthy.stdout, /^publications\s+2\s+0\s+yes$/m);
  assert.match(healthy.stdout, /^runs\s+3\s+0\s+yes$/m);
  assert.match(healthy.stdout, /^no violations$/m);
  assert.equal(healthy.stderr, '', 'no progress line when stderr is not a terminal');

  // Break every invariant, each in its own record.
  const published = withDb(dbPath, (db) => db.prepare('SELECT subject_id, artifact_ref FROM publications ORDER BY subject_id').all() as { subject_id: string; artifact_ref: string }[]);
  assert.equal(published.length, 2);
  const [corrupted, deleted] = published as [{ subject_id: string; artifact_ref: string }, { subject_id: string; artifact_ref: string }];
  // The images are inline (blobs of the store file): one byte flipped at the same size, one row gone.
  withDb(dbPath, (db) => {
    const row = db.prepare('SELECT bytes FROM blobs WHERE ref = ?').get(corrupted.artifact_ref) as { bytes: Buffer } | undefined;
    assert.ok(row, 'the QR image is inline');
    row.bytes[row.bytes.length - 1] = (row.bytes[row.bytes.length - 1] ?? 0) ^ 0xff;
    assert.equal(db.prepare('UPDATE blobs SET bytes = ? WHERE ref = ?').run(row.bytes, corrupted.artifact_ref).changes, 1);
    assert.equal(db.prepare('DELETE FROM blobs WHERE ref = ?').run(deleted.artifact_ref).changes, 1);
  });
  const staleJobId = await leaseLeftADayAgo(dbPath, root);
  const stuck = await kiln('submit', 'demo.sleep', '{"delayMs":1}');
  assert.equal(stuck.code, 0, stuck.stderr);
  const stuckRunId = stuck.stdout.trim();
  withDb(dbPath, (db) => {
    assert.equal(db.prepare('DELETE FROM jobs WHERE run_id = ?').run(stuckRunId).changes, 1);
    assert.equal(db.prepare("DELETE FROM ledger WHERE run_id = ? AND stage = 'process' AND kind = 'stage'").run(sleepRunId).changes, 1);
    assert.equal(db.prepare("UPDATE stage_records SET status = 'running' WHERE run_id = ? AND stage = 'finish'").run(sleepRunId).changes, 1);
  });
  const orphan = await writeTemp(root, 'crashed.tmp', Date.now() - 2 * 3600_000);
  await writeTemp(root, 'writing.tmp', Date.now() - 60_000);
  const expected: ExpectedViolation[] = [
    `PUBLICATION_ARTIFACT_CORRUPT ${corrupted.subject_id}`,
    `CACHE_ARTIFACT_CORRUPT ${corrupted.subject_id}`,
    `PUBLICATION_ARTIFACT_MISSING ${deleted.subject_id}`,
    `CACHE_ARTIFACT_MISSING ${deleted.subject_id}`,
    `LEASE_EXPIRED_UNREAPED ${staleJobId}`,
    `RUN_WITHOUT_JOB ${stuckRunId}`,
    `LEDGER_ENTRY_MISSING ${sleepRunId}/process`,
    `LEDGER_ENTRY_UNEXPECTED ${sleepRunId}/finish`,
    `TEMP_FILE_ORPHANED ${orphan}`,
  ];

  const json = await kiln('verify', '--json');
  assert.equal(json.code, ExitCode.failure, json.stderr);
  const report = JSON.parse(json.stdout) as VerifyReport & { startedAt: string };
  assert.deepEqual(found(report), expected.sort());
  assert.equal(report.ok, false);
  assert.match(report.startedAt, /^\d{4}-\d\d-\d\dT/);

  const text = await kiln('verify');
  assert.equal(text.code, ExitCode.failure);
  for (const line of expected) assert.ok(text.stdout.includes(line.split(' ')[0] ?? ''), `${line} in\n${text.stdout}`);
  assert.match(text.stdout, new RegExp(`runId=${stuckRunId}`));
  assert.match(text.stdout, /^9 violations$/m);

  // A grace longer than the lease's day and the temp's two hours leaves only the rest; one check alone reads only its records.
  const lenient = await kiln('verify', '--grace', '72h', '--json');
  assert.deepEqual(
    found(JSON.parse(lenient.stdout) as VerifyReport).map((v) => v.split(' ')[0]),
    ['CACHE_ARTIFACT_CORRUPT', 'CACHE_ARTIFACT_MISSING', 'LEDGER_ENTRY_MISSING', 'LEDGER_ENTRY_UNEXPECTED', 'PUBLICATION_ARTIFACT_CORRUPT', 'PUBLICATION_ARTIFACT_MISSING', 'RUN_WITHOUT_JOB'],
  );
  const ledgerOnly = await kiln('verify', '--checks', 'ledger', '--json');
  assert.equal(ledgerOnly.code, ExitCode.failure);
  assert.deepEqual(found(JSON.parse(ledgerOnly.stdout) as VerifyReport), [`LEDGER_ENTRY_MISSING ${sleepRunId}/process`, `LEDGER_ENTRY_UNEXPECTED ${sleepRunId}/finish`]);
  const badCheck = await kiln('verify', '--checks', 'ledger,nope');
  assert.equal(badCheck.code, ExitCode.usage);
  assert.match(badCheck.stderr, /unknown checks nope/);
});
