/**
 * SQLite schema and statement shape: what keeps the hot path cheap (indexed lookups only, rows
 * read raw in a fixed column order) and the statements prepared per value (claim limits, run
 * statuses), checked on a real migrated file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import * as J from '../../src/stores/sqlite/sql/jobs.ts';
import * as R from '../../src/stores/sqlite/sql/reads.ts';
import * as RT from '../../src/stores/sqlite/sql/retention.ts';
import * as S from '../../src/stores/sqlite/sql/stats.ts';
import * as T from '../../src/stores/sqlite/sql/tokens.ts';
import { RAW_JOB, RAW_RUN, type RawRowReader } from '../../src/stores/sqlite/rows.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { jobIdempotencyKey } from '../../src/core/keys.ts';
import { RunStatus } from '../../src/core/model.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { stageJob, submit } from '../conformance/fixture.ts';

/** Statements run for every submission, claim or commit, by name. */
const HOT_STATEMENTS: Record<string, string> = {
  // Every request to a server with tokens looks one up by its hash (unless cached).
  SELECT_API_TOKEN_BY_HASH: T.SELECT_API_TOKEN_BY_HASH,
  SELECT_READY_TENANTS: J.SELECT_READY_TENANTS,
  pickTenantReady: J.pickTenantReadySql(10, 'all'),
  pickTenantReadyWithExpired: J.pickTenantReadySql(10, 'withExpired'),
  pickTenantFirstAttempts: J.pickTenantReadySql(10, 'firstAttempts'),
  pickExpired: J.pickRetriesSql(10, false),
  pickRetries: J.pickRetriesSql(10, true),
  COUNT_RETRIES_RUNNING: J.COUNT_RETRIES_RUNNING,
  LEASE_JOB: J.LEASE_JOB,
  DELETE_LEASED_JOB: J.DELETE_LEASED_JOB,
  INSERT_JOB: J.INSERT_JOB,
  SELECT_JOB: J.SELECT_JOB,
  UNLEASE_JOB: J.UNLEASE_JOB,
  RENEW_JOB: J.RENEW_JOB,
  REAP_EXPIRED: J.REAP_EXPIRED,
  INSERT_RUN: J.INSERT_RUN,
  insertStages: J.insertStagesSql(5),
  SELECT_RUNS_BY_IDS: J.SELECT_RUNS_BY_IDS,
  MARK_RUN_RUNNING: J.MARK_RUN_RUNNING,
  SELECT_RUN_STATUS: J.SELECT_RUN_STATUS,
  SELECT_RUN: J.SELECT_RUN,
  TOUCH_RUN: J.TOUCH_RUN,
  FINISH_RUN: J.FINISH_RUN,
  SUCCEED_STAGE: J.SUCCEED_STAGE,
  FAIL_STAGE: J.FAIL_STAGE,
  SELECT_SUCCEEDED_OUTPUTS: J.SELECT_SUCCEEDED_OUTPUTS,
  INSERT_LEDGER: J.INSERT_LEDGER,
  SELECT_LEDGER_OUTPUTS: J.SELECT_LEDGER_OUTPUTS,
  TAKE_FENCES: J.TAKE_FENCES,
  INSERT_FAILED_ATTEMPT: J.INSERT_FAILED_ATTEMPT,
};

/** EXPLAIN QUERY PLAN of `sql`, every parameter bound to 1, as one line per step. */
function planOf(db: Database.Database, sql: string): string[] {
  const statement = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1], 1]));
  const positional = (sql.match(/\?/g) ?? []).map(() => 1);
  const rows = (Object.keys(named).length > 0 ? statement.all(named) : statement.all(...positional)) as { detail: string }[];
  return rows.map((row) => row.detail);
}

describe('sqlite schema and statements', () => {
  let dir = '';
  let path = '';
  let store: Store;
  let raw: Database.Database | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-sqlite-schema-'));
    path = join(dir, 'kiln.db');
    store = createSqliteStore({ path, clock: createFakeClock() });
    await store.migrate();
  });
  afterEach(async () => {
    raw?.close();
    raw = undefined;
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a migrated file holds exactly the tables some statement uses (0005 dropped the unused locks and artifacts, 0006 made locks anew)', () => {
    raw = new Database(path, { readonly: true });
    const tables = raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    assert.deepEqual(tables, [
      'api_tokens',
      'blobs',
      'cache_entries',
      'failed_attempts',
      'fence_counter',
      'jobs',
      'ledger',
      'locks',
      'publications',
      'queue_activity',
      'queues',
      'request_records',
      'retired_jobs',
      'runs',
      'schema_version',
      'stage_records',
      'version_counters',
    ]);
  });

  it('hot-path statements find rows by key or index and never scan a whole table', () => {
    raw = new Database(path, { readonly: true });
    for (const [name, sql] of Object.entries(HOT_STATEMENTS)) {
      for (const step of planOf(raw, sql)) {
        assert.doesNotMatch(step, /^SCAN (r|cj|uj|runs|stage_records|jobs|ledger|retired_jobs|api_tokens)\b/, `${name}: ${step}`);
      }
    }
  });

  it('retention finds expired runs by runs_finished and old requests by request_records_created, and deletes by key, never scanning', () => {
    raw = new Database(path, { readonly: true });
    const plans = {
      select: planOf(raw, RT.SELECT_EXPIRED_RUNS),
      count: planOf(raw, RT.COUNT_EXPIRED_RUNS),
      requests: planOf(raw, RT.DELETE_EXPIRED_REQUESTS),
      retired: planOf(raw, 'DELETE FROM retired_jobs WHERE run_id = ?'),
    };
    assert.ok(plans.select.some((step) => /SEARCH r USING INDEX runs_finished \(status=\? AND/.test(step)), plans.select.join('; '));
    assert.ok(plans.count.some((step) => step.includes('runs_finished')), plans.count.join('; '));
    assert.ok(plans.requests.some((step) => step.includes('request_records_created')), plans.requests.join('; '));
    assert.ok(plans.retired.some((step) => step.includes('retired_jobs_run')), plans.retired.join('; '));
    for (const [name, plan] of Object.entries(plans)) {
      for (const step of plan) assert.doesNotMatch(step, /^SCAN (r|runs|stage_records|jobs|ledger|retired_jobs|request_records)\b/, `${name}: ${step}`);
    }
  });

  it('listRuns by a status that needs an operator walks runs_status; every status can be listed', async () => {
    raw = new Database(path, { readonly: true });
    for (const status of ['failed', 'dead_lettered', 'cancelled', 'superseded', 'parked'] as const) {
      assert.ok(
        planOf(raw, R.listRunsSql(R.runListingPath({ status }))).some((step) => step.includes('runs_status')),
        `${status} uses runs_status`,
      );
    }
    for (const status of Object.values(RunStatus)) assert.deepEqual(await store.reads.listRuns({ status, limit: 5 }), []);
  });

  it('listRuns by subject or tenant walks runs_subject_id or runs_tenant, never the whole runs table', () => {
    raw = new Database(path, { readonly: true });
    for (const [query, index] of [
      [{ subjectId: 's', tenant: 't', status: 'failed' }, 'runs_subject_id'],
      [{ tenant: 't', status: 'failed' }, 'runs_tenant'],
    ] as const) {
      const plan = planOf(raw, R.listRunsSql(R.runListingPath(query)));
      assert.ok(plan.some((step) => step.includes(index)), plan.join('; '));
      for (const step of plan) assert.doesNotMatch(step, /^SCAN (r|runs)\b/);
    }
  });

  it('every run listing seeks its id range on the primary key; queue activity reads one range of its key', () => {
    raw = new Database(path, { readonly: true });
    const walk = planOf(raw, R.listRunsSql('table'));
    assert.ok(walk.some((step) => /SEARCH r USING PRIMARY KEY \(id>\? AND id<\?\)/.test(step)), walk.join('; '));
    const activity = planOf(raw, S.COUNT_ACTIVITY);
    assert.ok(activity.some((step) => /SEARCH queue_activity USING PRIMARY KEY \(minute_at>\?\)/.test(step)), activity.join('; '));
  });

  it('the raw readers of jobs and runs name every column of their table and decode a row as the driver reads it', async () => {
    // Every field set, and to a value no other field has, where the path allows: a reader mapping
    // one column to another's field fails the comparison.
    const run = await submit(store, {
      tenant: 't1',
      traceId: 'trace-1',
      traceParent: '00-trace-1-span-01',
      idempotencyKey: 'key-1',
      subjectId: 'subject-1',
      subjectVersion: 7,
    });
    const queue = run.currentStage === null ? '' : stageJob(run.currentStage).queue;
    assert.equal((await store.jobs.claim([{ queue, workerId: 'worker-1', limit: 1, leaseMs: 12_345 }])).length, 1, 'the job is leased: its lease fields are set');
    raw = new Database(path, { readonly: true });
    const readers: [string, RawRowReader<unknown>][] = [['jobs', RAW_JOB], ['runs', RAW_RUN]];
    for (const [table, reader] of readers) {
      const columns: string[] = (raw.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
      assert.deepEqual(reader.columns.split(', ').sort(), columns.sort(), `${table}: every column`);
      const asObject = raw.prepare(`SELECT * FROM ${table}`).get();
      const asValues = raw.prepare(`SELECT ${reader.columns} FROM ${table}`).raw(true).get() as unknown[];
      assert.deepEqual(reader.fromValues(asValues), asObject, table);
    }
  });

  it('job idempotency keys embed their run id, as the run-scoped jobs_run_key and ledger keys require', () => {
    // Migration 0001 scopes "one live job per key" and "first completion per key wins" to a run;
    // that equals global uniqueness only while a key names its run.
    for (const kind of ['stage', 'rollback'] as const) {
      assert.ok(jobIdempotencyKey('run_x', 'render', kind).startsWith('run_x:'));
      assert.notEqual(jobIdempotencyKey('run_x', 'render', kind), jobIdempotencyKey('run_y', 'render', kind));
    }
  });

  it('a claim limit above the per-statement cap is served up to the cap without error', async () => {
    const run = await submit(store);
    const queue = run.currentStage === null ? '' : stageJob(run.currentStage).queue;
    const claimed = await store.jobs.claim([{ queue, workerId: 'w', limit: J.MAX_PICK_LIMIT * 10, leaseMs: 1_000 }]);
    assert.equal(claimed.length, 1);
  });
});
