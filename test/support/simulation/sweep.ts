/**
 * Many schedules in a row: the seed range a test or `npm run sim` runs, read from the
 * environment (`SIM_SEED` replays one seed, `SIM_SCHEDULES` sets how many, `SIM_SEED_START`
 * where a range starts, `SIM_VARIANT` the store), and what the run did.
 */
import { runSchedule, SimulationFailure } from './schedule.ts';
import { STORE_VARIANTS, type StoreVariant } from './variants.ts';

/** A range of seeds on one store. */
export interface Sweep {
  first: number;
  count: number;
  variant: StoreVariant;
}

/** What a passing sweep did. */
export interface SweepSummary extends Sweep {
  steps: number;
  runs: number;
  seconds: number;
  schedulesPerSecond: number;
  /** Store calls per action over every schedule. */
  actions: Record<string, number>;
}

function envInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

/**
 * The sweep the environment asks for: `SIM_SEED=<n>` is that one schedule (with `SIM_SCHEDULES`,
 * that many from it); otherwise `SIM_SCHEDULES` (default `count`) seeds from `SIM_SEED_START`
 * (default `first`); `SIM_VARIANT` picks a broken store (default the shipped one).
 */
export function sweepFromEnv(defaults: { first: number; count: number }, env: NodeJS.ProcessEnv = process.env): Sweep {
  const seed = envInteger(env, 'SIM_SEED');
  const count = envInteger(env, 'SIM_SCHEDULES');
  const variant = env['SIM_VARIANT'] ?? 'correct';
  if (!(STORE_VARIANTS as readonly string[]).includes(variant)) throw new Error(`SIM_VARIANT must be one of ${STORE_VARIANTS.join(', ')}, got "${variant}"`);
  return {
    first: seed ?? envInteger(env, 'SIM_SEED_START') ?? defaults.first,
    count: count ?? (seed === undefined ? defaults.count : 1),
    variant: variant as StoreVariant,
  };
}

/** Runs every schedule of the sweep; throws the first {@link SimulationFailure}. `onProgress` after each schedule. */
export async function runSweep(sweep: Sweep, onProgress?: (done: number) => void): Promise<SweepSummary> {
  const started = performance.now();
  const actions: Record<string, number> = {};
  let steps = 0;
  let runs = 0;
  for (let i = 0; i < sweep.count; i++) {
    const result = await runSchedule({ seed: sweep.first + i, variant: sweep.variant });
    steps += result.steps;
    runs += result.runs;
    for (const [name, n] of Object.entries(result.actions)) actions[name] = (actions[name] ?? 0) + n;
    onProgress?.(i + 1);
  }
  const seconds = (performance.now() - started) / 1000;
  return { ...sweep, steps, runs, seconds, schedulesPerSecond: sweep.count / Math.max(seconds, 1e-9), actions };
}

/** The first schedule of `variant` from seed `first` that breaks an invariant, within `max` schedules, and how many ran. */
export async function firstFailure(variant: StoreVariant, first: number, max: number): Promise<{ failure: SimulationFailure; schedules: number } | null> {
  for (let i = 0; i < max; i++) {
    try {
      await runSchedule({ seed: first + i, variant });
    } catch (err) {
      if (err instanceof SimulationFailure) return { failure: err, schedules: i + 1 };
      throw err;
    }
  }
  return null;
}

/** The seed range of a sweep, for people. */
export function describeSweep(sweep: Sweep): string {
  return `seeds ${sweep.first}..${sweep.first + sweep.count - 1} on the ${sweep.variant} store`;
}
