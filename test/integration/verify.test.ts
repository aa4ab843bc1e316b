/**
 * The invariant audit (`kiln.verify`, the engine function behind `kiln verify` and
 * `GET /v1/verify`) on the memory, SQLite and PostgreSQL stores with real artifact files: nothing
 * on a healthy store after real pipeline runs; after each invariant is broken on purpose (see
 * verify-scenario.ts), exactly those violations, with their ids. PostgreSQL runs on this
 * process's private cluster, Redis on its private redis-server (each skipped, with the reason,
 * where none is available).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import { jobIdempotencyKey } from '../../src/core/keys.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createContext } from '../../src/stores/memory/context.ts';
import { buildMemoryStoreOn } from '../../src/stores/memory/store.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { keyPrefix } from '../../src/stores/redis/index.ts';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { usePostgresStores } from '../support/postgres-stores.ts';
import { createStoreName, redisSkipReason } from '../support/redis-server.ts';
import { useRedisStores } from '../support/redis-stores.ts';
import { assertHealthy, breakEverything, found, runHealthyWork, verifyWorld, type StoreTamper } from './verify-scenario.ts';

/** A store on `clock` and what breaks it behind its port. */
interface StoreUnderAudit {
  store: Store;
  tamper: StoreTamper;
}

/** Declares the scenario for a store made by `open` (in a fresh temp dir, on a fake clock at the real time). */
function describeAudit(open: (dir: string, clock: FakeClock) => Promise<StoreUnderAudit>): void {
  it('finds nothing on a healthy store, then exactly each invariant broken on purpose, with its ids', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-verify-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const clock = createFakeClock(Date.now());
    const { store, tamper } = await open(dir, clock);
    await store.migrate();
    const world = verifyWorld(store, clock, dir);
    const work = await runHealthyWork(world);

    assertHealthy(await world.kiln.verify({ pageSize: 2 }));

    const expected = await breakEverything(world, tamper, work);
    const report = await world.kiln.verify({ pageSize: 2 });
    assert.deepEqual(found(report), expected);
    assert.equal(report.ok, false);
    assert.equal(report.violationCount, expected.length);
    const corrupt = report.violations.find((v) => v.kind === 'PUBLICATION_ARTIFACT_CORRUPT');
    assert.deepEqual(corrupt?.ids, { subjectId: work.qrA.hash, profile: 'image', artifactRef: work.qrA.artifact });
    assert.match(corrupt?.message ?? '', /damaged/);
    const lease = report.violations.find((v) => v.kind === 'LEASE_EXPIRED_UNREAPED');
    assert.equal(lease?.details['leaseOwner'], 'crashed-worker');
    assert.ok(Number(lease?.details['overdueMs']) >= 24 * 3600_000 - 30_000);

    const only = await world.kiln.verify({ checks: ['runs', 'ledger'], maxViolations: 1 });
    assert.deepEqual(
      only.checks.map((c) => c.check),
      ['runs', 'ledger'],
    );
    assert.equal(only.violationCount, 3, 'every violation is counted');
    assert.equal(only.violations.length, 1, 'at most maxViolations are listed');
  });
}

describe('kiln.verify on the memory store', () => {
  describeAudit(async (_dir, clock) => {
    const ctx = createContext(clock, createIdGenerator(clock));
    const { state } = ctx;
    return {
      store: buildMemoryStoreOn(ctx),
      tamper: {
        deleteJobs: async (runId) => {
          for (const job of state.jobsOfRun(runId)) state.deleteJob(job.id);
        },
        deleteLedgerEntry: async (runId, stage) => {
          assert.equal(state.ledger.delete(jobIdempotencyKey(runId, stage, 'stage')), true);
        },
        setStageStatus: async (runId, stage, status) => {
          state.stageRecord(runId, stage).status = status;
        },
      },
    };
  });

  it('stopped early, it says so and reads nothing more', async () => {
    const clock = createFakeClock(Date.now());
    const store = buildMemoryStoreOn(createContext(clock, createIdGenerator(clock)));
    await store.migrate();
    const dir = await mkdtemp(join(tmpdir(), 'kiln-verify-'));
    try {
      const report = await verifyWorld(store, clock, dir).kiln.verify({ signal: AbortSignal.abort() });
      assert.equal(report.complete, false);
      assert.equal(report.ok, false, 'an audit that did not finish proves nothing');
      assert.ok(report.checks.every((c) => !c.complete && c.scanned === 0));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('kiln.verify on the SQLite store', () => {
  describeAudit(async (dir, clock) => {
    const path = join(dir, 'kiln.db');
    const store = createSqliteStore({ path, clock });
    const sql = (text: string, ...params: string[]): void => {
      const db = new Database(path);
      try {
        assert.ok(db.prepare(text).run(...params).changes > 0, text);
      } finally {
        db.close();
      }
    };
    return {
      store,
      tamper: {
        deleteJobs: async (runId) => sql('DELETE FROM jobs WHERE run_id = ?', runId),
        deleteLedgerEntry: async (runId, stage) => sql("DELETE FROM ledger WHERE run_id = ? AND stage = ? AND kind = 'stage'", runId, stage),
        setStageStatus: async (runId, stage, status) => sql('UPDATE stage_records SET status = ? WHERE run_id = ? AND stage = ?', status, runId, stage),
      },
    };
  });
});

const skip = postgresSkipReason();

describe('kiln.verify on the PostgreSQL store', { skip }, () => {
  const postgres = usePostgresStores();
  describeAudit(async (_dir, clock) => {
    const schema = postgres.newSchema();
    const store = await postgres.open({ schema, clock });
    const sql = async (text: string, ...params: string[]): Promise<void> => {
      const result = await (await postgres.admin()).query(text.replaceAll('$schema', `"${schema}"`), params);
      assert.ok((result.rowCount ?? 0) > 0, text);
    };
    return {
      store,
      tamper: {
        deleteJobs: (runId) => sql('DELETE FROM $schema.jobs WHERE run_id = $1', runId),
        deleteLedgerEntry: (runId, stage) => sql("DELETE FROM $schema.ledger WHERE run_id = $1 AND stage = $2 AND kind = 'stage'", runId, stage),
        setStageStatus: (runId, stage, status) => sql('UPDATE $schema.stage_records SET status = $3 WHERE run_id = $1 AND stage = $2', runId, stage, status),
      },
    };
  });
});

/**
 * Tampering behind the Redis store's port: Lua run as one unit on the store's keys (the layout of
 * src/stores/redis/routines/lib-keys.lua; KEYS[1] = the prefix, ARGV = run id, stage, status).
 */
const REDIS_TAMPER = {
  /** Deletes the run's jobs from their state's index, the run's job set and the job records. */
  deleteJobs: `
    local P, n = KEYS[1], 0
    for _, id in ipairs(redis.call('SMEMBERS', P .. 'runjobs:' .. ARGV[1])) do
      local j = redis.call('HMGET', P .. 'job:' .. id, 'queue', 'state', 'priority')
      if j[2] == 'ready' then redis.call('ZREM', P .. 'ready:' .. j[1] .. ':' .. j[3], id) end
      if j[2] == 'leased' or j[2] == 'parked' or j[2] == 'dead' then redis.call('ZREM', P .. j[2] .. ':' .. j[1], id) end
      redis.call('ZREM', P .. 'deadjobs', id)
      n = n + redis.call('DEL', P .. 'job:' .. id)
    end
    redis.call('DEL', P .. 'runjobs:' .. ARGV[1])
    return n`,
  /** Deletes the ledger entry of kind stage of the run's stage ARGV[2] (and its place in the run's list). */
  deleteLedgerEntry: `
    local P = KEYS[1]
    for _, key in ipairs(redis.call('LRANGE', P .. 'runledger:' .. ARGV[1], 0, -1)) do
      -- One string: runId, kind, completedAt, the stage's length, each then NUL; the stage; the output.
      local text = redis.call('GET', P .. 'ledger:' .. key)
      local _, _, kind, length, rest = string.find(text, '^[^%z]*%z([^%z]*)%z[^%z]*%z(%d+)%z(.*)$')
      if kind == 'stage' and string.sub(rest, 1, tonumber(length)) == ARGV[2] then
        redis.call('LREM', P .. 'runledger:' .. ARGV[1], 0, key)
        return redis.call('DEL', P .. 'ledger:' .. key)
      end
    end
    return 0`,
  /** Sets the status of the run's stage record ARGV[2] to ARGV[3]. */
  setStageStatus: `
    local P = KEYS[1]
    local index = redis.call('LPOS', P .. 'stages:' .. ARGV[1], ARGV[2])
    if not index then return 0 end
    redis.call('HSET', P .. 'stage:' .. ARGV[1] .. ':' .. index, 'status', ARGV[3])
    return 1`,
} as const;

describe('kiln.verify on the Redis store', { skip: redisSkipReason() }, () => {
  const redis = useRedisStores();
  describeAudit(async (_dir, clock) => {
    const name = createStoreName();
    const store = await redis.open({ name, clock });
    const run = async (script: keyof typeof REDIS_TAMPER, ...args: string[]): Promise<void> => {
      const changed = await (await redis.admin()).eval(REDIS_TAMPER[script], 1, keyPrefix(name), ...args);
      assert.ok(Number(changed) > 0, `${script} changed nothing`);
    };
    return {
      store,
      tamper: {
        deleteJobs: (runId) => run('deleteJobs', runId),
        deleteLedgerEntry: (runId, stage) => run('deleteLedgerEntry', runId, stage),
        setStageStatus: (runId, stage, status) => run('setStageStatus', runId, stage, status),
      },
    };
  });
});
