/**
 * Migration 0020 (a claim no longer writes the stage record): a schema left by the code before
 * it (here the 0009 fixture, holding what the old claim wrote) reads the same stages after the
 * upgrade, and an in-flight job then finishes with the attempts the old code would have counted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFakeClock } from '../../src/core/clock.ts';
import type { StageRecord } from '../../src/core/model.ts';
import { postgresSkipReason } from '../support/postgres-cluster.ts';
import { loadFixture0009 } from '../support/postgres-schema.ts';
import { usePostgresStores } from '../support/postgres-stores.ts';

const skip = postgresSkipReason();
const T0 = 1_000_000;

/**
 * Stage a leased on its second claim (the old claim counted both on the record: 2 + 1 before),
 * stage b retried once and ready again, stage c never claimed.
 */
const SEED = `
INSERT INTO runs (id, pipeline, pipeline_version, status, current_stage, input, input_checksum, created_at, updated_at)
VALUES ('run_1', 'demo', 1, 'running', 'a', '{}', 'x', ${T0}, ${T0});
INSERT INTO stage_records (run_id, stage, stage_index, status, attempts, lease_owner, lease_until, started_at) VALUES
  ('run_1', 'a', 0, 'running', 3, 'w1', ${T0 + 30_000}, ${T0 - 5_000}),
  ('run_1', 'b', 1, 'failed', 1, NULL, NULL, ${T0 - 4_000}),
  ('run_1', 'c', 2, 'pending', 0, NULL, NULL, NULL);
INSERT INTO jobs (id, run_id, pipeline, stage, queue, kind, state, idempotency_key, attempt, max_attempts, priority,
                  available_at, enqueued_at, lease_owner, lease_token, fence, lease_until, lease_ms) VALUES
  ('job_a', 'run_1', 'demo', 'a', 'demo.a', 'stage', 'leased', 'run_1:a', 2, 5, 0, ${T0}, ${T0}, 'w1', 'tok_a', 7, ${T0 + 30_000}, 30000),
  ('job_b', 'run_1', 'demo', 'b', 'demo.b', 'stage', 'ready', 'run_1:b', 1, 5, 0, ${T0}, ${T0}, NULL, NULL, NULL, NULL, NULL)`;

describe('postgres migration 0020 (stage leases read from jobs)', { skip }, () => {
  const stores = usePostgresStores();

  it('stages of in-flight jobs read as before the upgrade, and a completion counts the claims the old code counted', async () => {
    const schema = stores.newSchema();
    await loadFixture0009(await stores.url(), schema);
    const admin = await stores.admin();
    await admin.query(`SET search_path TO "${schema}"; ${SEED}`);
    const store = await stores.open({ schema, clock: createFakeClock(T0) });
    await store.migrate();

    const view = (s: StageRecord | undefined) => [s?.stage, s?.status, s?.attempts, s?.leaseOwner, s?.leaseUntil, s?.startedAt];
    assert.deepEqual((await store.reads.getRun('run_1'))?.stages.map(view), [
      ['a', 'running', 3, 'w1', T0 + 30_000, T0 - 5_000],
      ['b', 'failed', 1, null, null, T0 - 4_000],
      ['c', 'pending', 0, null, null, null],
    ]);

    const result = await store.jobs.commit([
      { type: 'complete', lease: { jobId: 'job_a', token: 'tok_a' }, output: { ok: true }, durationMs: 1, next: null },
    ]);
    assert.equal(result[0]?.outcome, 'committed');
    const a = (await store.reads.getRun('run_1'))?.stages[0];
    assert.deepEqual([a?.status, a?.attempts, a?.leaseOwner, a?.startedAt], ['succeeded', 3, null, T0 - 5_000]);
  });
});
