/**
 * The deterministic simulation of the worker protocol (test/support/simulation/): thousands of
 * seeded schedules of claims, heartbeats, expiries, commits, crashes and operator actions on the
 * memory store with a fake clock, every invariant checked after each step, must all pass; and a
 * store broken on purpose (test-only variants: the commit fence's token check skipped, its expiry
 * check skipped, the ledger entry not written; a claim that takes live leases) must be caught,
 * naming the invariant, and its failing seed must replay exactly.
 *
 * `SIM_SEED=<n>` replays one schedule (the failure message prints the seed and the step),
 * `SIM_SCHEDULES=<n>` runs that many; `npm run sim` runs many more.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Invariant } from '../support/simulation/invariants.ts';
import { runSchedule, SimulationFailure } from '../support/simulation/schedule.ts';
import { describeSweep, firstFailure, runSweep, sweepFromEnv } from '../support/simulation/sweep.ts';

/** The schedules CI runs: a fixed seed range, so a failure here is a failure on every machine. */
const CI_SCHEDULES = 5_000;
/** A broken fence must be caught within this many schedules. */
const CATCH_WITHIN = 200;

describe('worker-protocol simulation', () => {
  it(`runs ${CI_SCHEDULES} seeded schedules on the memory store without breaking an invariant`, async (t) => {
    const sweep = sweepFromEnv({ first: 1, count: CI_SCHEDULES });
    const summary = await runSweep(sweep);
    t.diagnostic(`${describeSweep(sweep)}: ${summary.steps} steps, ${summary.runs} runs in ${summary.seconds.toFixed(1)} s (${summary.schedulesPerSecond.toFixed(0)} schedules/s)`);
    t.diagnostic(`actions: ${JSON.stringify(summary.actions)}`);
    if (sweep.count < 100) return;
    // The schedules did what they are for: every action happened, and stale holders were refused.
    for (const action of ['submit', 'claim', 'renew', 'advance', 'commit', 'release', 'reap', 'crash', 'operator', 'redelivery', 'commit refused by the fence', 'heartbeat refused by the fence']) {
      assert.ok((summary.actions[action] ?? 0) > 0, `no schedule did "${action}"`);
    }
  });

  it('is a function of its seed: the same seed runs the same schedule', async () => {
    const first = await runSchedule({ seed: 42 });
    assert.deepEqual(await runSchedule({ seed: 42 }), first);
    assert.notDeepEqual({ ...(await runSchedule({ seed: 43 })), seed: 42 }, first, 'another seed runs another schedule');
  });

  const broken = [
    ['commit-ignores-token', Invariant.FENCE_STALE_COMMIT_ACCEPTED],
    ['commit-ignores-expiry', Invariant.FENCE_STALE_COMMIT_ACCEPTED],
    ['commit-forgets-ledger', 'verify:LEDGER_ENTRY_MISSING'],
    ['claim-ignores-lease', Invariant.JOB_HELD_TWICE],
  ] as const;
  for (const [variant, invariant] of broken) {
    it(`catches a broken store (${variant}) as ${invariant}, and its seed replays exactly`, async (t) => {
      const found = await firstFailure(variant, 1, CATCH_WITHIN);
      assert.ok(found, `the ${variant} store passed ${CATCH_WITHIN} schedules`);
      const { failure, schedules } = found;
      t.diagnostic(`caught after ${schedules} schedule(s): seed ${failure.seed}, step ${failure.step}, ${failure.invariant}`);
      assert.equal(failure.invariant, invariant);
      assert.match(failure.message, new RegExp(`seed ${failure.seed} .* at step ${failure.step}: `));
      assert.match(failure.message, new RegExp(`SIM_VARIANT=${variant} SIM_SEED=${failure.seed} `));

      const again = await runSchedule({ seed: failure.seed, variant }).then(
        () => null,
        (err: unknown) => err,
      );
      assert.ok(again instanceof SimulationFailure, 'the failing seed passed when replayed');
      assert.equal(again.message, failure.message, 'the replay is the same schedule, to the same step and violation');
      // The shipped store passes the very schedule that caught the broken one.
      await runSchedule({ seed: failure.seed });
    });
  }
});
