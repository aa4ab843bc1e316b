/**
 * The PostgreSQL claim reads a queue's head, not its backlog (migration 0022): with thousands of
 * ready jobs without a tenant (the default), the claim statement's plan, as auto_explain prints
 * it for the statement inside claim_jobs, takes the head from jobs_ready_untenanted in claim
 * order and reads about `limit` entries of it. Before 0022 the tenant-less branch could only use
 * jobs_ready_tenant with `tenant IS NULL`, which PostgreSQL does not take as fixing the column for
 * ordering, so every claim read every ready job of the queue and sorted them.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { contentHash } from '../../src/core/canonical.ts';
import type { SubmitRunRequest } from '../../src/core/ports/jobs.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';

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

/** The plan auto_explain sends as a NOTICE for the statement inside claim_jobs that leases jobs. */
async function claimPlan(client: pg.Client, schema: string): Promise<string> {
  const notices: string[] = [];
  const onNotice = (notice: { message?: string }): void => void notices.push(notice.message ?? '');
  client.on('notice', onNotice);
  try {
    await client.query("LOAD 'auto_explain'");
    await client.query('SET auto_explain.log_min_duration = 0');
    await client.query('SET auto_explain.log_analyze = on');
    await client.query('SET auto_explain.log_nested_statements = on');
    await client.query("SET auto_explain.log_level = 'notice'");
    await client.query("SET client_min_messages = 'notice'");
    const tokens = Array.from({ length: LIMIT }, (_, i) => `token-${i}`);
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${schema}".claim_jobs(NULL, ARRAY['demo.a'], ARRAY['w'], ARRAY[${LIMIT}], ARRAY[30000::bigint], $1::text[], ARRAY[NULL::int])`,
      [tokens],
    );
    assert.equal(rows[0]?.n, LIMIT);
  } finally {
    client.off('notice', onNotice);
  }
  const plan = notices.find((text) => text.includes('WITH req AS'));
  assert.ok(plan, `auto_explain printed no plan of the claim statement (notices: ${notices.length})`);
  return plan;
}

describe('the postgres claim plan', { skip }, () => {
  let client: pg.Client | undefined;
  let schema: string | undefined;
  after(async () => {
    if (client && schema) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client?.end();
    await (await sharedPostgres()).stop();
  });

  it(`takes the head of ${BACKLOG} tenant-less ready jobs from jobs_ready_untenanted, reading about the limit`, async () => {
    const url = (await sharedPostgres()).url;
    schema = createSchemaName();
    const store = createPostgresStore({ connectionString: url, schema });
    try {
      await store.migrate();
      for (let n = 0; n < BACKLOG; n += 500) await store.jobs.submit(Array.from({ length: 500 }, (_, i) => request(n + i)));
    } finally {
      await store.close();
    }
    client = new pg.Client({ connectionString: url });
    await client.connect();

    const plan = await claimPlan(client, schema);
    const scan = plan.split('\n').find((line) => /Index (Only )?Scan using jobs_ready_untenanted/.test(line));
    assert.ok(scan, `the claim does not read jobs_ready_untenanted:\n${plan}`);
    const read = Number(/actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(scan)?.[1]);
    assert.ok(read <= LIMIT * 2, `the head scan read ${read} entries for a claim of ${LIMIT}:\n${plan}`);
  });
});
