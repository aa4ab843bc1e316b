/**
 * PostgreSQL's retry cap under concurrent claimers (routines/jobs-claim.sql): claims of a capped
 * queue take a transaction advisory lock on it before the claim statement, so a second claimer
 * waits for the first to commit and then counts its retries as running. Without the lock, the
 * second claim would see none of them (its snapshot predates the first commit) and skip past the
 * first claimer's locked rows to more retries. The first claimer is held open here on its own
 * connection, so the overlap is forced, not hoped for.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import pg from 'pg';
import { runRequest, stageJob } from '../conformance/fixture.ts';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { usePostgresStores } from '../support/postgres-stores.ts';

const LEASE_MS = 30_000;

describe('postgres retry cap under concurrent claimers', { skip: postgresSkipReason() }, () => {
  const postgres = usePostgresStores();

  it('a second claim of a capped queue waits for the first claimer and then counts its retries as running', async () => {
    const url = await postgres.url();
    const schema = postgres.newSchema();
    const store = await postgres.open({ schema });
    await store.migrate();

    // Four jobs fail their first attempt and are ready again at once: four retries.
    await store.jobs.submit(Array.from({ length: 4 }, () => runRequest({ firstJob: stageJob('a') })));
    const first = await store.jobs.claim([{ queue: 'demo.a', workerId: 'w', limit: 4, leaseMs: LEASE_MS }]);
    assert.equal(first.length, 4);
    await store.jobs.commit(
      first.map((cj) => ({
        type: 'fail',
        lease: { jobId: cj.job.id, token: cj.job.leaseToken ?? '' },
        error: { class: 'transient', code: 'FLAKY', message: 'flaky' },
        durationMs: 1,
        decision: { action: 'retry', delayMs: 0 },
      }) as const),
    );

    // Claimer 1, on its own connection, takes two retries under cap 2 and does not commit yet.
    const held = new pg.Client({ connectionString: url });
    await held.connect();
    try {
      await held.query('BEGIN');
      const tokens = Array.from({ length: 10 }, (_, i) => `held-${i}`);
      const taken = await held.query(`SELECT * FROM "${schema}".claim_jobs(NULL, $1::text[], $2::text[], $3::int[], $4::bigint[], $5::text[], $6::int[])`, [
        ['demo.a'], ['held'], [10], [LEASE_MS], tokens, [2],
      ]);
      assert.equal(taken.rowCount, 2);

      // Claimer 2 (the store) under the same cap: it must wait for claimer 1's advisory lock.
      let settled = false;
      const second = store.jobs.claim([{ queue: 'demo.a', workerId: 'w2', limit: 10, leaseMs: LEASE_MS, maxRetriesRunning: 2 }]);
      void second.finally(() => (settled = true)).catch(() => undefined);
      const waiting = async (): Promise<boolean> => {
        const { rows } = await held.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        return (rows[0]?.n ?? 0) > 0;
      };
      // Polled until one of the two happens (no time bound: the test runner's timeout is the limit).
      while (!settled && !(await waiting())) await sleep(10);
      assert.equal(settled, false, 'the second claim did not wait for the first claimer of the capped queue');

      await held.query('COMMIT');
      assert.deepEqual(await second, [], "claimer 1's two running retries fill the cap");
      // A claim without a cap takes the other two.
      assert.equal((await store.jobs.claim([{ queue: 'demo.a', workerId: 'w3', limit: 10, leaseMs: LEASE_MS }])).length, 2);
    } finally {
      await held.end();
    }
  });
});
