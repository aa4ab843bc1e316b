/**
 * Many processes on one store, under placed faults: the chaos harness (test/support/chaos/) runs
 * one API process and four `kiln worker` processes, each worker spawned with a crash plan from
 * the seed, so every crash point (after-claim, mid-handler, after-artifact-write, after-commit,
 * mid-rollback) SIGKILLs a worker exactly PER_POINT times, whatever the machine's speed; the store
 * restarts once meanwhile (SQLite: the API process killed; PostgreSQL: `pg_ctl restart`; Redis:
 * redis-server killed and started on its AOF). Afterwards every run ended as its input said
 * (succeeded, or failed with its compensations run), every stage and compensation is once in the
 * ledger, each run's publication points at its committed artifact, no job is left (none stuck),
 * and redeliveries were needed. On PostgreSQL, on a shared SQLite file and on Redis.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CRASH_POINTS } from '../../src/engine/crash-points.ts';
import { formatChaosReport, runChaos } from '../support/chaos/harness.ts';
import { qrE2eStoreCases } from './qr-stores.ts';

/** Kills per crash point: enough that each point is really passed under load, few enough for CI (workers start slowly). */
const PER_POINT = 2;
const SEED = 14;

const { sqlite, postgres, redis } = qrE2eStoreCases();
const stores = [
  [postgres, 'postgres'],
  [sqlite, 'sqlite'],
  [redis, 'redis'],
] as const;
for (const [storeCase, store] of stores) describe(`${storeCase.name}: one API and four workers, each killed at a planned crash point`, { skip: storeCase.skip }, () => {
  test(`each crash point kills a worker ${PER_POINT} times; every run ends as planned with every stage once in the ledger, none stuck`, { timeout: 600_000 }, async (t) => {
    const report = await runChaos({ seed: SEED, store, perPoint: PER_POINT, restarts: 1, faults: false, chaosTimeoutMs: 300_000, log: (line) => t.diagnostic(line) });
    const summary = formatChaosReport(report);
    for (const line of summary.split('\n')) t.diagnostic(line);
    assert.deepEqual(report.violations, [], summary);
    for (const point of CRASH_POINTS) assert.equal(report.kills[point], PER_POINT, `kills at ${point}`);
    // A KILN_PG_URL / KILN_REDIS_URL server is someone else's: not restarted, and said so.
    assert.equal(report.restarts + report.restartsSkipped, 1, 'the store restarted once');
    assert.deepEqual(
      { lost: report.lost, duplicated: report.duplicated, duplicatePublications: report.duplicatePublications, wrongPublications: report.wrongPublications, stuck: report.stuck },
      { lost: 0, duplicated: 0, duplicatePublications: 0, wrongPublications: 0, stuck: 0 },
    );
    assert.ok(report.runs > 0);
    assert.ok(report.attempts > report.stages, `some stages needed more than one attempt (${report.attempts} attempts for ${report.stages} stage jobs)`);
  });
});
