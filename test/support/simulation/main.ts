/**
 * `npm run sim`: many more schedules of the worker-protocol simulation than CI runs. Defaults to
 * 50,000 schedules from a seed drawn from the time (printed, so a run can be repeated with
 * `SIM_SEED_START`); `SIM_SCHEDULES`, `SIM_SEED` (one schedule), `SIM_VARIANT` as in sweep.ts.
 * Prints progress, schedules per second and the seed range; exits 1 with the failing seed and
 * step when an invariant breaks.
 */
import { SimulationFailure } from './schedule.ts';
import { describeSweep, runSweep, sweepFromEnv } from './sweep.ts';

const sweep = sweepFromEnv({ first: Date.now() % 1_000_000_000, count: 50_000 });
const every = Math.max(1, Math.round(sweep.count / 10));
process.stdout.write(`simulation: ${describeSweep(sweep)}\n`);
const started = performance.now();
try {
  const summary = await runSweep(sweep, (done) => {
    if (done % every !== 0 || done === sweep.count) return;
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`  ${done} schedules, ${(done / seconds).toFixed(0)}/s\n`);
  });
  process.stdout.write(
    `ok: ${summary.count} schedules (${summary.steps} steps, ${summary.runs} runs) in ${summary.seconds.toFixed(1)} s, ` +
      `${summary.schedulesPerSecond.toFixed(0)} schedules/s, ${describeSweep(sweep)}\n` +
      `actions: ${JSON.stringify(summary.actions)}\n`,
  );
} catch (err) {
  if (!(err instanceof SimulationFailure)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exitCode = 1;
}
