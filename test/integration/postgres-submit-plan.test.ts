/**
 * A PostgreSQL submission batch (`submit_runs`) reads stored runs by index probes, one per
 * request, however the table grew after its plan was made: the plan is generic and kept by the
 * connection, so one made while the runs table was nearly empty must not scan it. As joins, a
 * batch on a connection that first submitted into an empty store hashed a seq scan of every run
 * (the idempotency-key lookup and the rows it returns), a cost that grew with the store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';
import { nestedPlans } from '../support/postgres-plans.ts';

const skip = postgresSkipReason();
const STORED = 20_000;

/** A `submit_request` JSON object (routines/jobs-submit.sql) of run `n`, keyed `key-n`. */
function submitRequest(n: number): Record<string, unknown> {
  return {
    run_id: `run-new-${n}`,
    job_id: `job-new-${n}`,
    pipeline: 'demo',
    pipeline_version: 1,
    input: JSON.stringify({ n }),
    input_checksum: `sum-${n}`,
    idempotency_key: `key-${n}`,
    stages: ['a'],
    first_stage: 'a',
    first_queue: 'demo.a',
    first_kind: 'stage',
    first_key: `key-${n}:a`,
    max_attempts: 3,
    priority: 0,
  };
}

describe('the postgres submission plan', { skip }, () => {
  const schema = createSchemaName();
  let client: pg.Client | undefined;
  before(async () => {
    const url = (await sharedPostgres()).url;
    const store = createPostgresStore({ connectionString: url, schema });
    await store.migrate();
    await store.close();
    client = new pg.Client({ connectionString: url });
    await client.connect();
  });
  after(async () => {
    await client?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client?.end();
    await (await sharedPostgres()).stop();
  });

  it(`reads ${STORED} stored runs by index probes with a plan made while the store was empty`, async () => {
    const submit = (requests: Record<string, unknown>[]) =>
      nestedPlans<{ created: boolean }>(client!, `SELECT created FROM "${schema}".submit_runs($1::json, NULL, 'kiln_test')`, [JSON.stringify(requests)]);
    // The connection's first batch, into an empty store, makes and keeps the plan.
    await submit([0, 1].map(submitRequest));
    await client!.query(
      `INSERT INTO "${schema}".runs (id, pipeline, pipeline_version, status, input, input_checksum, idempotency_key, created_at, updated_at, finished_at)
       SELECT 'run-stored-' || n, 'demo', 1, 'succeeded', json_build_object('n', n), 'sum-' || n, 'key-' || n, n, n, n
       FROM generate_series(100, ${STORED + 99}) n`,
    );
    // Ten new runs and ten whose keys are stored (the same input: answered by the stored run).
    const { rows, plans } = await submit([...Array.from({ length: 10 }, (_, i) => 10 + i), ...Array.from({ length: 10 }, (_, i) => 100 + i)].map(submitRequest));
    assert.deepEqual(rows.map((row) => row.created), [...Array<boolean>(10).fill(true), ...Array<boolean>(10).fill(false)]);
    const scans = plans.filter((plan) => /Seq Scan on runs\b/.test(plan));
    assert.deepEqual(scans, [], 'a statement of submit_runs scanned the whole runs table');
    for (const plan of plans) {
      for (const [, rowsRead] of plan.matchAll(/Index (?:Only )?Scan using runs_\w+ on runs \w+ +\(cost=[^)]*\) \(actual time=[\d.]+\.\.[\d.]+ rows=(\d+) loops=1\)/g)) {
        assert.ok(Number(rowsRead) <= 20, `an index scan of runs read ${rowsRead} rows for 20 requests:\n${plan}`);
      }
    }
  });
});
