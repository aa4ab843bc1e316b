/**
 * The PostgreSQL claim reads a queue's head, not its backlog (migration 0022): with thousands of
 * ready jobs without a tenant (the default), the claim statement's plan, as auto_explain prints
 * it for the statement inside claim_jobs, takes the head from jobs_ready_untenanted in claim
 * order and reads about `limit` entries of it. Before 0022 the tenant-less branch could only use
 * jobs_ready_tenant with `tenant IS NULL`, which PostgreSQL does not take as fixing the column for
 * ordering, so every claim read every ready job of the queue and sorted them.
 *
 * The claimed jobs, their runs and their ledger entries are read by primary key, one probe per job,
 * not by hashing a scan of the whole table (what the planner chose while the table was small; for
 * the jobs, at the default random_page_cost).
 *
 * The tenants of a queue are listed inside the claim's plan: ready_tenants() is inlined, not called
 * (and planned afresh) once per queue, which a SQL function with a SET clause always is.
 *
 * The claim marks the runs it starts through runs_pkey, however stale the statistics: analyzed
 * when every run had finished, they say no run is queued, and a `status = 'queued'` restriction
 * on runs then had the planner drive that update from runs_in_flight, reading every in-flight
 * run once for every claimed job.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { contentHash } from '../../src/core/canonical.ts';
import type { SubmitRunRequest } from '../../src/core/ports/jobs.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';
import { nestedPlans } from '../support/postgres-plans.ts';

const skip = postgresSkipReason();
const BACKLOG = 2_000;
const LIMIT = 10;

function request(n: number): SubmitRunRequest {
  const input = { n };
  return {
    pipeline: 'demo',
    pipelineVersion: 1,
    input,
    inputChecksum: contentHash(input),
    stages: ['a'],
    firstJob: { stage: 'a', queue: 'demo.a', kind: 'stage', maxAttempts: 3, priority: 0 },
  };
}

/** The plan auto_explain prints for the statement inside claim_jobs that leases jobs. */
async function claimPlan(client: pg.Client, schema: string): Promise<string> {
  const tokens = Array.from({ length: LIMIT }, (_, i) => `token-${i}`);
  const { rows, plans } = await nestedPlans<{ n: number }>(
    client,
    `SELECT count(*)::int AS n FROM "${schema}".claim_jobs(NULL, ARRAY['demo.a'], ARRAY['w'], ARRAY[${LIMIT}], ARRAY[30000::bigint], $1::text[], ARRAY[NULL::int])`,
    [tokens],
  );
  assert.equal(rows[0]?.n, LIMIT);
  const plan = plans.find((text) => text.includes('WITH req AS'));
  assert.ok(plan, `auto_explain printed no plan of the claim statement (notices: ${plans.length})`);
  return plan;
}

/** The lines of the plan of CTE `name`, up to the plan's next CTE or its main node. */
function ctePlan(plan: string, name: string): string {
  const lines = plan.split('\n');
  const start = lines.findIndex((line) => line.trim() === `CTE ${name}`);
  assert.ok(start >= 0, `the claim plan has no CTE ${name}:\n${plan}`);
  const end = lines.findIndex((line, i) => i > start && /^ {2}\S/.test(line));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

describe('the postgres claim plan', { skip }, () => {
  const schemas: string[] = [];
  let url = '';
  let client: pg.Client | undefined;
  before(async () => {
    url = (await sharedPostgres()).url;
    client = new pg.Client({ connectionString: url });
    await client.connect();
  });
  after(async () => {
    for (const schema of schemas) await client?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client?.end();
    await (await sharedPostgres()).stop();
  });

  /** A migrated schema with `runs` runs submitted (queued), after `prepare` ran on it. */
  async function schemaWith(runs: number, prepare: (schema: string) => Promise<unknown> = async () => {}): Promise<string> {
    const schema = createSchemaName();
    schemas.push(schema);
    const store = createPostgresStore({ connectionString: url, schema });
    try {
      await store.migrate();
      await prepare(schema);
      for (let n = 0; n < runs; n += 500) await store.jobs.submit(Array.from({ length: 500 }, (_, i) => request(n + i)));
    } finally {
      await store.close();
    }
    return schema;
  }

  it(`takes the head of ${BACKLOG} tenant-less ready jobs from jobs_ready_untenanted, reading about the limit, lists tenants inline, and leases them and reads their runs and ledger entries by primary key`, async () => {
    const plan = await claimPlan(client!, await schemaWith(BACKLOG));
    const scan = plan.split('\n').find((line) => /Index (Only )?Scan using jobs_ready_untenanted/.test(line));
    assert.ok(scan, `the claim does not read jobs_ready_untenanted:\n${plan}`);
    const read = Number(/actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(scan)?.[1]);
    assert.ok(read <= LIMIT * 2, `the head scan read ${read} entries for a claim of ${LIMIT}:\n${plan}`);
    // The claimed jobs themselves, their runs and ledger entries: one primary-key probe each, no
    // table read whole.
    assert.doesNotMatch(plan, /Seq Scan on (jobs|runs|ledger)\b/, `the claim reads a whole table:\n${plan}`);
    assert.match(ctePlan(plan, 'claimed'), /Index Scan using runs_pkey/, `the claim does not read runs by runs_pkey:\n${plan}`);
    assert.doesNotMatch(plan, /Function Scan on ready_tenants/, `ready_tenants() is called, not inlined:\n${plan}`);
  });

  it(`starts the claimed runs through runs_pkey while statistics say none of ${BACKLOG} runs is queued`, async () => {
    // 20,000 finished runs analyzed before the submissions: the statistics know no queued run.
    const schema = await schemaWith(BACKLOG, async (name) => {
      await client!.query(
        `INSERT INTO "${name}".runs (id, pipeline, pipeline_version, status, input, input_checksum, created_at, updated_at, finished_at)
         SELECT 'done-' || n, 'demo', 1, 'succeeded', '{}', 'x', n, n, n FROM generate_series(1, 20000) n`,
      );
      await client!.query(`ANALYZE "${name}".runs, "${name}".jobs`);
    });
    const started = ctePlan(await claimPlan(client!, schema), 'started');
    assert.match(started, /Index Scan using runs_pkey/, `the runs update does not use runs_pkey:\n${started}`);
    for (const [, rows] of started.matchAll(/actual time=[\d.]+\.\.[\d.]+ rows=(\d+) loops=1\b/g)) {
      assert.ok(Number(rows) <= LIMIT, `the runs update read ${rows} rows to start ${LIMIT} runs:\n${started}`);
    }
  });
});
