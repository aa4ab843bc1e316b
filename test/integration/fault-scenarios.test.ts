/**
 * Every fault scenario of the chaos harness (test/support/chaos/faults) once on SQLite, so CI
 * exercises them: each ends with nothing lost, duplicated or stuck, and its fault really happened
 * (the scenario's own counts say so: failed writes, timeouts, 503s, rebuilds).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { faultScenarios, type FaultReport } from '../support/chaos/faults/index.ts';

/** What each scenario's details must show for its fault to have happened. */
const FAULT_HAPPENED: Record<string, (details: FaultReport['details']) => void> = {
  'full-disk': (d) => {
    assert.equal(d['probeWhileFull'], 'ARTIFACTS_UNAVAILABLE');
    assert.equal(d['enoughFailuresSeen'], 'yes');
    assert.ok(Number(d['failedAttempts']) > 0 && d['failedAttempts'] === d['failedAttemptsUnavailableTransient'], 'every failed attempt: ARTIFACTS_UNAVAILABLE, transient');
  },
  'slow-artifacts': (d) => {
    assert.equal(d['enoughTimeoutsSeen'], 'yes');
    assert.ok(Number(d['failedAttempts']) > 0 && d['failedAttempts'] === d['failedAttemptsTimeoutTransient'], 'every failed attempt: STAGE_TIMEOUT, transient');
  },
  'slow-store': (d) => {
    assert.ok(Number(d['answers503WhileSlow']) > 0 && d['answers503WhileSlow'] === d['answers503WithRetryAfter'], '503s with Retry-After while slow');
    assert.equal(d['otherAnswersWhileSlow'], 0);
    assert.ok(Number(d['runsReachedStoreWhileSlow']) > 0, 'late submissions reached the store (their retries must not duplicate them)');
  },
  'cache-stampede': (d) => {
    assert.ok(Number(d['keysRebuilt']) > 0, 'keys expired and were rebuilt');
    assert.ok(Number(d['rebuildStepsUsed']) > 1, 'rebuilds spread over more than one step');
  },
};

describe('fault scenarios on SQLite', () => {
  test('the list names each scenario once, and each has its check here', () => {
    const names = faultScenarios.map((s) => s.name);
    assert.deepEqual(names.toSorted(), Object.keys(FAULT_HAPPENED).toSorted());
  });
  for (const scenario of faultScenarios) {
    test(`${scenario.name}: nothing lost, duplicated or stuck, and the fault happened`, { timeout: 120_000 }, async (t) => {
      const report = await scenario.run({ seed: 17, store: 'sqlite', log: (line) => t.diagnostic(line) });
      t.diagnostic(JSON.stringify(report));
      assert.equal(report.name, scenario.name);
      assert.ok(report.runs > 0);
      assert.deepEqual(
        { lost: report.lost, duplicated: report.duplicated, duplicatePublications: report.duplicatePublications, stuck: report.stuck },
        { lost: 0, duplicated: 0, duplicatePublications: 0, stuck: 0 },
      );
      FAULT_HAPPENED[scenario.name]?.(report.details);
    });
  }
});
