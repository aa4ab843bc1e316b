/**
 * A PostgreSQL commit batch reads the jobs it completes (the fenced delete, the check that they
 * belong to distinct runs) and their runs, stage records and ledger by primary key, not by a seq
 * scan of the whole table: with a few thousand live jobs and the default random_page_cost, the
 * planner hashed a scan of every job for a batch of 10 (commit_batch_with_publications now runs
 * with random_page_cost 1.1, see routines/jobs-claim.sql).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { contentHash } from '../../src/core/canonical.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createSchemaName, postgresSkipReason, sharedPostgres } from '../support/postgres-cluster.ts';
import { nestedPlans } from '../support/postgres-plans.ts';

const skip = postgresSkipReason();
const LIVE = 2_000;
const BATCH = 10;

describe('the postgres commit plan', { skip }, () => {
  const schema = createSchemaName();
  let client: pg.Client | undefined;
  after(async () => {
    await client?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client?.end();
    await (await sharedPostgres()).stop();
  });

  it(`completes ${BATCH} of ${LIVE} live jobs reading each table by key, none whole`, async () => {
    const url = (await sharedPostgres()).url;
    const store = createPostgresStore({ connectionString: url, schema });
    let claimed;
    try {
      await store.migrate();
      for (let n = 0; n < LIVE; n += 500) {
        await store.jobs.submit(
          Array.from({ length: 500 }, (_, i) => {
            const input = { n: n + i };
            return { pipeline: 'demo', pipelineVersion: 1, input, inputChecksum: contentHash(input), stages: ['a', 'b'], firstJob: { stage: 'a', queue: 'demo.a', kind: 'stage', maxAttempts: 3, priority: 0 } };
          }),
        );
      }
      claimed = await store.jobs.claim([{ queue: 'demo.a', workerId: 'w', limit: BATCH, leaseMs: 600_000 }]);
    } finally {
      await store.close();
    }
    // `commit_item` objects (routines/jobs-commit.sql): completions that enqueue stage b.
    const items = claimed.map((c, i) => ({
      type: 'complete',
      job_id: c.job.id,
      token: c.job.leaseToken,
      duration_ms: 1,
      output: '{}',
      enqueue_id: `job-b-${i}`,
      enqueue_stage: 'b',
      enqueue_queue: 'demo.b',
      enqueue_kind: 'stage',
      enqueue_key: '\u0001run\u0001:b',
      enqueue_max_attempts: 3,
      enqueue_priority: 0,
    }));
    client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows, plans } = await nestedPlans<{ outcome: string }>(
      client,
      `SELECT outcome FROM "${schema}".commit_batch_with_publications($1::json, floor(extract(epoch FROM now()) * 1000)::bigint, 'kiln_test', ARRAY['running'])`,
      [JSON.stringify(items)],
    );
    assert.deepEqual(rows.map((row) => row.outcome), Array<string>(BATCH).fill('committed'));
    const scans = plans.filter((plan) => /Seq Scan on (jobs|runs|stage_records|ledger)\b/.test(plan));
    assert.deepEqual(scans, [], 'a statement of the commit read a whole table');
  });
});
