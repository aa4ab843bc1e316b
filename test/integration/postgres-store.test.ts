/**
 * PostgreSQL-specific behaviour the conformance suite cannot express through the port alone:
 * concurrent migration, schema versions and names, error mapping, surviving a server restart,
 * LISTEN/NOTIFY across store instances, and claims racing from two instances. Runs on this
 * process's private PostgreSQL (never on KILN_PG_URL for the restart tests: they stop the server).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type pg from 'pg';
import { createPostgresStore, mapError } from '../../src/stores/postgres/index.ts';
import { latestSchemaVersion } from '../../src/stores/postgres/migrate.ts';
import { contentHash } from '../../src/core/canonical.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import { StoreUnavailableError, ConflictError, PipelineError, SchemaVersionError, ValidationError } from '../../src/core/errors.ts';
import type { ClaimedJob } from '../../src/core/ports/jobs.ts';
import type { Store } from '../../src/core/ports/store.ts';
import {
  canRestartPostgres,
  postgresSkipReason,
  restartPostgres,
  sharedPostgres,
  startStoppedPostgres,
  stopPostgresForOutage,
} from '../support/postgres-cluster.ts';
import { usePostgresStores } from '../support/postgres-stores.ts';

const skip = postgresSkipReason();
const QUEUE = 'demo.a';

/** Submits one single-stage run of `demo` on {@link QUEUE}. */
async function submitOne(store: Store, n: number, queue = QUEUE): Promise<string> {
  const input = { n };
  const [result] = await store.jobs.submit([
    {
      pipeline: 'demo',
      pipelineVersion: 1,
      input,
      inputChecksum: contentHash(input),
      stages: ['a'],
      firstJob: { stage: 'a', queue, kind: 'stage', maxAttempts: 3, priority: 0 },
    },
  ]);
  assert.ok(result);
  return result.run.id;
}

/** Resolves with the first wake for `queue`, triggering `poke` until it comes (LISTEN starts asynchronously). */
async function wakeFor(store: Store, queue: string, poke: () => Promise<unknown>, timeoutMs = 10_000): Promise<void> {
  const woken = new Promise<void>((resolve) => {
    const unsubscribe = store.onWake((q) => {
      if (q !== queue) return;
      unsubscribe();
      resolve();
    });
  });
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void woken.then(() => (done = true));
  while (!done) {
    if (Date.now() > deadline) throw new Error(`no wake for ${queue} within ${timeoutMs} ms`);
    await poke();
    await Promise.race([woken, new Promise((resolve) => setTimeout(resolve, 100))]);
  }
}

/** Resolves once a `kiln` connection waits on a lock (polling `pg_stat_activity`). */
async function waitForLockWaiter(pool: pg.Pool, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const waiting = await pool.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'kiln' AND wait_event_type = 'Lock'`);
    if (waiting.rows.length > 0) return;
    if (Date.now() > deadline) throw new Error(`no kiln connection waited on a lock within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('postgres store specifics', { skip }, () => {
  const postgres = usePostgresStores();
  /** A store on `schema` (a fresh one by default); closed and dropped after the test. */
  const open = (options: { schema?: string; fakeClock?: boolean; connectionString?: string } = {}): Promise<Store> => {
    const { fakeClock, ...rest } = options;
    return postgres.open({ ...rest, ...(fakeClock ? { clock: createFakeClock() } : {}) });
  };

  it('four stores migrating a fresh schema at once: one applies every migration, the others nothing', async () => {
    const schema = postgres.newSchema();
    const stores = await Promise.all([1, 2, 3, 4].map(() => open({ schema })));
    const results = await Promise.all(stores.map((b) => b.migrate()));
    const all = Array.from({ length: latestSchemaVersion() }, (_, i) => i + 1);
    assert.deepEqual(
      results.map((r) => r.applied).sort((a, b) => b.length - a.length),
      [all, [], [], []],
    );
    for (const result of results) assert.equal(result.version, latestSchemaVersion());
    const recorded = await (await postgres.admin()).query(`SELECT version FROM "${schema}".schema_version ORDER BY version`);
    assert.deepEqual(
      recorded.rows.map((r: { version: number }) => r.version),
      all,
    );
  });

  it('a schema migrated by newer code is refused with SchemaVersionError by migrate and by every other call', async () => {
    const schema = postgres.newSchema();
    await (await open({ schema })).migrate();
    await (await postgres.admin()).query(`INSERT INTO "${schema}".schema_version (version, name, applied_at) VALUES ($1, 'future', 0)`, [
      latestSchemaVersion() + 1,
    ]);
    const store = await open({ schema });
    await assert.rejects(store.migrate(), SchemaVersionError);
    await assert.rejects(submitOne(store, 1), SchemaVersionError);
    await assert.rejects(store.jobs.claim([{ queue: QUEUE, workerId: 'w', limit: 1, leaseMs: 1000 }]), SchemaVersionError);
    assert.deepEqual(await store.schemaVersion(), { current: latestSchemaVersion() + 1, latest: latestSchemaVersion() });
  });

  it('a schema never migrated reports version 0 and refuses work with SchemaVersionError until migrate()', async () => {
    const store = await open();
    assert.deepEqual(await store.schemaVersion(), { current: 0, latest: latestSchemaVersion() });
    await assert.rejects(submitOne(store, 1), SchemaVersionError);
    await store.migrate();
    await submitOne(store, 1);
    assert.equal((await store.reads.listJobs({ limit: 10 })).length, 1);
  });

  it('schema names outside [a-z_][a-z0-9_]{0,62}, pg_* and information_schema are a ValidationError', async () => {
    const connectionString = await postgres.url();
    for (const schema of ['Kiln', '1kiln', 'kiln-x', 'kiln"; DROP TABLE x; --', '', 'a'.repeat(64), 'pg_kiln', 'information_schema']) {
      assert.throws(() => createPostgresStore({ connectionString, schema }), ValidationError, schema);
    }
    assert.throws(() => createPostgresStore({ connectionString, poolSize: 0 }), ValidationError);
    const longest = createPostgresStore({ connectionString, schema: `k${'x'.repeat(62)}` });
    await longest.close();
  });

  it('leases follow the database clock: not the time the worker asked at, nor any clock the worker hands the store', async () => {
    const LEASE_MS = 60_000;
    const HOLD_MS = 1_500;
    const DAY_MS = 86_400_000;
    // The worker's own notion of time, a day off, handed to everything of the store that takes a
    // clock; no `clock` option, so the store runs as in production.
    const workerClock = createFakeClock();
    workerClock.set(Date.now() + DAY_MS);
    const schema = postgres.newSchema();
    const store = await postgres.open({ schema, ids: createIdGenerator(workerClock), poolSize: 1 });
    await store.migrate();
    assert.equal((store.capabilities as { timeSource?: string }).timeSource, 'database');
    await submitOne(store, 1);

    // The pool's one connection waits on a row lock held by another session, so the claim asked
    // for now runs on the database only once the lock goes, HOLD_MS later.
    const pool = await postgres.admin();
    const holder = await pool.connect();
    let held: Promise<number> | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query(`INSERT INTO "${schema}".version_counters (scope, key, value, updated_at) VALUES ('hold', 'x', 1, 0)`);
      held = store.versions.allocate('hold', 'x');
      await waitForLockWaiter(pool);
      const askedAt = Date.now();
      const claim = store.jobs.claim([{ queue: QUEUE, workerId: 'w', limit: 1, leaseMs: LEASE_MS }]);
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      await holder.query('COMMIT');
      const [claimed] = await claim;
      const dbNow = Number((await pool.query<{ now: string }>(`SELECT floor(extract(epoch FROM now()) * 1000)::bigint AS now`)).rows[0]?.now);
      assert.ok(claimed?.job.leaseUntil !== null && claimed?.job.leaseUntil !== undefined, 'a job was claimed');
      const leasedAt = claimed.job.leaseUntil - LEASE_MS;
      assert.ok(leasedAt >= askedAt + HOLD_MS - 250, `the lease starts when the database ran the claim (${leasedAt}), not when the worker asked (${askedAt})`);
      assert.ok(leasedAt <= dbNow && dbNow - leasedAt < 5_000, `the lease starts at the database's now (${leasedAt} vs ${dbNow})`);
      assert.ok(Math.abs(leasedAt - workerClock.now()) > DAY_MS / 2, 'the clock handed to the store plays no part');
      assert.ok(Math.abs((await store.now()) - dbNow) < 5_000, 'Store.now() is the database clock');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await held;
    }
  });

  it('a store given a test clock takes every time from it, and says so in its capabilities', async () => {
    const tested = await open({ fakeClock: true });
    assert.equal((tested.capabilities as { timeSource?: string }).timeSource, 'injected_clock');
    assert.equal(tested.capabilities.crossProcessWake, true);
    assert.equal(await tested.now(), createFakeClock().now());
  });

  it('mapError: outages, lost races and connection failures are retryable StoreUnavailableError; others INTERNAL with the cause', () => {
    const sqlError = (code: string): Error => Object.assign(new Error(`sqlstate ${code}`), { code });
    for (const code of ['57P01', '57P03', '53300', '40001', '40P01', '08006', 'ECONNREFUSED', 'ECONNRESET']) {
      const mapped = mapError(sqlError(code));
      assert.ok(mapped instanceof StoreUnavailableError, code);
      assert.equal(mapped.retryable, true, code);
    }
    assert.ok(mapError(new Error('Connection terminated unexpectedly')) instanceof StoreUnavailableError);
    assert.ok(mapError(new Error('timeout exceeded when trying to connect')) instanceof StoreUnavailableError);
    assert.ok(mapError(sqlError('42P01')) instanceof SchemaVersionError);
    const auth = mapError(sqlError('28P01'));
    assert.equal(auth.code, 'STORE_UNAVAILABLE');
    assert.equal(auth.retryable, false);
    const unique = sqlError('23505');
    const internal = mapError(unique);
    assert.equal(internal.code, 'INTERNAL');
    assert.equal(internal.retryable, false);
    assert.equal(internal.cause, unique);
    assert.deepEqual(internal.details, { code: '23505' });
    const own = new ConflictError('LOCK_HELD', 'held');
    assert.equal(mapError(own), own);
    assert.ok(mapError('a string') instanceof PipelineError);
  });

  it('a call to a server nobody listens on rejects with StoreUnavailableError, not a driver error', async () => {
    const store = await open({ connectionString: 'postgresql://postgres@127.0.0.1:1/postgres' });
    await assert.rejects(store.migrate(), (err: unknown) => {
      assert.ok(err instanceof StoreUnavailableError, String(err));
      assert.equal(err.retryable, true);
      return true;
    });
  });

  it('the pool survives the server going away: calls during the outage are StoreUnavailableError, after it they work again', async (t) => {
    await sharedPostgres();
    if (!canRestartPostgres()) return t.skip('KILN_PG_URL is a server this test must not stop');
    const store = await open();
    await store.migrate();
    const first = await submitOne(store, 1);

    await stopPostgresForOutage();
    try {
      await assert.rejects(store.reads.getRun(first), StoreUnavailableError);
      await assert.rejects(submitOne(store, 2), StoreUnavailableError);
    } finally {
      await startStoppedPostgres();
    }
    assert.equal((await store.reads.getRun(first))?.run.id, first);
    await submitOne(store, 3);

    await restartPostgres();
    assert.equal((await store.reads.getRun(first))?.run.id, first);
    assert.equal((await store.reads.listJobs({ limit: 10 })).length, 2);
  });

  it('a wake crosses store instances through LISTEN/NOTIFY, and the LISTEN connection comes back after a restart', async (t) => {
    const schema = postgres.newSchema();
    const listener = await open({ schema });
    const sender = await open({ schema });
    await listener.migrate();
    let n = 0;
    await wakeFor(listener, 'demo.a', () => submitOne(sender, ++n));

    if (!canRestartPostgres()) return t.skip('the restart half needs a private cluster (KILN_PG_URL servers are not restarted by tests)');
    await restartPostgres();
    await wakeFor(listener, 'demo.a', () => submitOne(sender, ++n).catch(() => undefined));
  });

  it('a store hears its own wakes once: locally, not again through NOTIFY', async () => {
    const schema = postgres.newSchema();
    const store = await open({ schema });
    const other = await open({ schema });
    await store.migrate();
    let n = 0;
    await wakeFor(store, 'marker.a', () => submitOne(other, ++n, 'marker.a'));
    const woken: string[] = [];
    store.onWake((queue) => woken.push(queue));
    await submitOne(store, ++n, 'own.a');
    // NOTIFYs arrive in commit order: once the marker sent after our commit is here, our own
    // notification would have arrived too.
    await wakeFor(store, 'marker.b', () => submitOne(other, ++n, 'marker.b'));
    assert.deepEqual(
      woken.filter((q) => q === 'own.a'),
      ['own.a'],
    );
  });

  it('eight concurrent claimers on two store instances claim 500 jobs exactly once each', async () => {
    const schema = postgres.newSchema();
    const one = await open({ schema });
    const two = await open({ schema });
    await one.migrate();
    for (let i = 0; i < 500; i += 50) await Promise.all(Array.from({ length: 50 }, (_, k) => submitOne(one, i + k)));
    const claimer = async (store: Store, workerId: string): Promise<ClaimedJob[]> => {
      const mine: ClaimedJob[] = [];
      for (;;) {
        const batch = await store.jobs.claim([{ queue: QUEUE, workerId, limit: 7, leaseMs: 60_000 }]);
        if (batch.length === 0) return mine;
        mine.push(...batch);
      }
    };
    const claimed = (await Promise.all(Array.from({ length: 8 }, (_, w) => claimer(w % 2 === 0 ? one : two, `w${w}`)))).flat();
    assert.equal(claimed.length, 500);
    assert.equal(new Set(claimed.map((cj) => cj.job.id)).size, 500);
    assert.equal(new Set(claimed.map((cj) => cj.job.fence)).size, 500);
    const stored = await one.reads.listJobs({ queue: QUEUE, limit: 1000 });
    const tokens = new Map(stored.map((job) => [job.id, job.leaseToken]));
    for (const cj of claimed) assert.equal(tokens.get(cj.job.id), cj.job.leaseToken, 'the stored lease is the one handed out');
    const results = await two.jobs.commit(claimed.map((cj) => ({ type: 'complete', lease: { jobId: cj.job.id, token: cj.job.leaseToken ?? '' }, output: 1, durationMs: 1, next: null })));
    assert.equal(results.filter((r) => r.outcome === 'committed').length, 500);
  });

  it('sixteen concurrent allocateVersion calls on two store instances get every value from 1 to 16 once', async () => {
    const schema = postgres.newSchema();
    const one = await open({ schema });
    const two = await open({ schema });
    await one.migrate();
    const versions = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? one : two).versions.allocate('assets', 'race')));
    assert.deepEqual(
      versions.sort((a, b) => a - b),
      Array.from({ length: 16 }, (_, i) => i + 1),
    );
  });
});
