/**
 * Migration 0015 (a claim no longer writes the stage record): a database left by the code before
 * it, with stage jobs in flight, reads the same stages after the upgrade, and those jobs then
 * finish with the attempts the old code would have counted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createFakeClock } from '../../src/core/clock.ts';
import type { StageRecord } from '../../src/core/model.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { loadMigrations } from '../../src/stores/sqlite/migrate.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';

const T0 = 1_000_000;

/** A database migrated to version 14, holding what the old claim wrote for three stage jobs. */
function seedVersion14(path: string): void {
  const db = new Database(path);
  db.exec('CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  for (const m of loadMigrations().filter((x) => x.version <= 14)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_version VALUES (?, ?, ?)').run(m.version, m.name, T0);
  }
  db.prepare(
    `INSERT INTO runs (id, pipeline, pipeline_version, status, current_stage, input, input_checksum, created_at, updated_at)
     VALUES ('run_1', 'demo', 1, 'running', 'a', '{}', 'x', ?, ?)`,
  ).run(T0, T0);
  const stage = db.prepare(
    `INSERT INTO stage_records (run_id, stage, stage_index, status, attempts, lease_owner, lease_until, started_at)
     VALUES ('run_1', ?, ?, ?, ?, ?, ?, ?)`,
  );
  const job = db.prepare(
    `INSERT INTO jobs (id, run_id, pipeline, stage, queue, kind, state, idempotency_key, attempt, max_attempts, priority,
                       available_at, enqueued_at, lease_owner, lease_token, fence, lease_until, lease_ms)
     VALUES (?, 'run_1', 'demo', ?, ?, 'stage', ?, ?, ?, 5, 0, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // a: leased on its second claim (the old claim counted both on the record: 2 + 1 before).
  stage.run('a', 0, 'running', 3, 'w1', T0 + 30_000, T0 - 5_000);
  job.run('job_a', 'a', 'demo.a', 'leased', 'run_1:a:stage', 2, T0, T0, 'w1', 'tok_a', 7, T0 + 30_000, 30_000);
  // b: retried once, ready again (its record failed, one attempt counted).
  stage.run('b', 1, 'failed', 1, null, null, T0 - 4_000);
  job.run('job_b', 'b', 'demo.b', 'ready', 'run_1:b:stage', 1, T0, T0, null, null, null, null, null);
  // c: never claimed.
  stage.run('c', 2, 'pending', 0, null, null, null);
  db.close();
}

describe('sqlite migration 0015 (stage leases read from jobs)', () => {
  let dir = '';
  let store: Store | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-sqlite-0015-'));
  });
  afterEach(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stages of in-flight jobs read as before the upgrade, and a completion counts the claims the old code counted', async () => {
    const path = join(dir, 'kiln.db');
    seedVersion14(path);
    const view = (s: StageRecord | undefined) => [s?.stage, s?.status, s?.attempts, s?.leaseOwner, s?.leaseUntil, s?.startedAt];
    const expected = [
      ['a', 'running', 3, 'w1', T0 + 30_000, T0 - 5_000],
      ['b', 'failed', 1, null, null, T0 - 4_000],
      ['c', 'pending', 0, null, null, null],
    ];
    const raw = new Database(path, { readonly: true });
    const before = raw.prepare('SELECT stage, status, attempts, lease_owner, lease_until, started_at FROM stage_records ORDER BY stage_index').raw(true).all();
    raw.close();
    assert.deepEqual(before, expected, 'the seed is what the old code stored and read');

    const clock = createFakeClock(T0);
    store = createSqliteStore({ path, clock });
    await store.migrate();
    assert.deepEqual((await store.reads.getRun('run_1'))?.stages.map(view), expected);

    const result = await store.jobs.commit([
      { type: 'complete', lease: { jobId: 'job_a', token: 'tok_a' }, output: { ok: true }, durationMs: 1, next: null },
    ]);
    assert.equal(result[0]?.outcome, 'committed');
    const a = (await store.reads.getRun('run_1'))?.stages[0];
    assert.deepEqual([a?.status, a?.attempts, a?.leaseOwner, a?.startedAt], ['succeeded', 3, null, T0 - 5_000]);
  });
});
