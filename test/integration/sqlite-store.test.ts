/**
 * SQLite-specific behaviour the conformance suite cannot express through the port alone: schema
 * versions, the busy write lock, closing, error mapping, and fences shared by two connections.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSqliteStore, mapError } from '../../src/stores/sqlite/index.ts';
import { loadMigrations } from '../../src/stores/sqlite/migrate.ts';
import { contentHash } from '../../src/core/canonical.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { StoreUnavailableError, NotFoundError, PipelineError, SchemaVersionError } from '../../src/core/errors.ts';
import type { Store } from '../../src/core/ports/store.ts';

const QUEUE = 'demo.a';

async function submitOne(store: Store, n: number): Promise<void> {
  const input = { n };
  await store.jobs.submit([
    {
      pipeline: 'demo',
      pipelineVersion: 1,
      input,
      inputChecksum: contentHash(input),
      stages: ['a'],
      firstJob: { stage: 'a', queue: QUEUE, kind: 'stage', maxAttempts: 3, priority: 0 },
    },
  ]);
}

describe('sqlite store specifics', () => {
  let dir = '';
  let path = '';
  const opened: Store[] = [];
  const open = (busyTimeoutMs?: number): Store => {
    const store = createSqliteStore({ path, clock: createFakeClock(), busyTimeoutMs });
    opened.push(store);
    return store;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-sqlite-'));
    path = join(dir, 'kiln.db');
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every migration file is numbered in sequence and starts with a header comment', () => {
    const migrations = loadMigrations();
    assert.ok(migrations.length >= 2);
    migrations.forEach((m, i) => {
      assert.equal(m.version, i + 1);
      assert.match(m.sql, /^-- \d{4}_[a-z0-9_]+: /, `${m.name} starts with a header`);
    });
  });

  it('a database migrated by newer code is refused with SchemaVersionError by migrate and by every other call', async () => {
    const store = open();
    const { version } = await store.migrate();
    const raw = new Database(path);
    raw.prepare('INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)').run(version + 1, 'future.sql', 0);
    raw.close();

    const later = open();
    await assert.rejects(later.migrate(), SchemaVersionError);
    await assert.rejects(later.reads.queueStats(), SchemaVersionError);
  });

  it('a database that was never migrated is refused with SchemaVersionError instead of a driver error', async () => {
    const store = open();
    await assert.rejects(store.reads.listRuns({ limit: 1 }), SchemaVersionError);
    await store.migrate();
    assert.deepEqual(await store.reads.listRuns({ limit: 1 }), []);
  });

  it('a write blocked past the busy timeout by another process is a retryable StoreUnavailableError', async () => {
    const store = open(20);
    await store.migrate();
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      await assert.rejects(submitOne(store, 1), (err: unknown) => {
        assert.ok(err instanceof StoreUnavailableError);
        assert.equal(err.retryable, true);
        return true;
      });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await submitOne(store, 2);
    assert.equal((await store.reads.listJobs({ queue: QUEUE, limit: 10 })).length, 1, 'the refused write left nothing');
  });

  it('a closed store refuses calls with StoreUnavailableError and closing twice is harmless', async () => {
    const store = open();
    await store.migrate();
    await store.close();
    await store.close();
    await assert.rejects(store.reads.getRun('run_x'), StoreUnavailableError);
  });

  it('mapError passes kiln errors through and wraps anything else as INTERNAL with its cause', () => {
    const notFound = new NotFoundError('run', 'r1');
    assert.equal(mapError(notFound), notFound);
    const driverError = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
    assert.ok(mapError(driverError) instanceof StoreUnavailableError);
    const odd = Object.assign(new Error('constraint failed'), { code: 'SQLITE_CONSTRAINT_CHECK' });
    const mapped = mapError(odd);
    assert.ok(mapped instanceof PipelineError);
    assert.equal(mapped.code, 'INTERNAL');
    assert.equal(mapped.cause, odd);
  });

  it('claims through two connections to one file get strictly increasing fences', async () => {
    const first = open();
    const second = open();
    await first.migrate();
    await second.migrate();
    for (let n = 0; n < 6; n++) await submitOne(first, n);
    const fences: number[] = [];
    for (const store of [first, second, first, second]) {
      const claimed = await store.jobs.claim([{ queue: QUEUE, workerId: 'w', limit: 2, leaseMs: 1000 }]);
      fences.push(...claimed.map((c) => c.job.fence ?? -1));
    }
    assert.equal(fences.length, 6);
    assert.deepEqual(fences, [...fences].sort((a, b) => a - b), 'in claim order');
    assert.equal(new Set(fences).size, 6, 'never repeated');
  });

  it('opens the file in WAL mode, so readers in other processes never block the writer', async () => {
    const store = open();
    await store.migrate();
    const raw = new Database(path);
    try {
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      raw.close();
    }
  });
});
