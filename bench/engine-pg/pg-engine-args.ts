/**
 * Flags of `npm run bench -- engine --store postgres` (kiln vs graphile-worker vs pg-boss on one
 * PostgreSQL server), parsed the same way for `--store redis` (kiln-redis vs BullMQ).
 */
import { parseArgs } from 'node:util';
import { positiveInt } from '../engine/engine-args.ts';
import { parseSubmitMode, type SubmitMode } from '../engine/submit-heads.ts';
import { PG_SYSTEMS, PgScenario, type PgSystem } from './pg-bench-result.ts';

/** Flags of one server suite invocation (PostgreSQL or Redis), over its own systems. */
export interface ServerEngineArgs<S extends string> {
  /** Pre-filled no-op jobs for the no-op scenario. @default 5000 */
  jobs: number;
  /** 5-stage chains for the chains scenario. @default 1000 */
  chains: number;
  /** Jobs in flight per queue (per stage). @default 10 */
  concurrency: number;
  /** Systems to run, in suite order; all when `--only` is absent. */
  systems: S[];
  /** Scenarios to run; both when `--scenario` is absent. */
  scenarios: PgScenario[];
  /** Profile the kiln children (`node --cpu-prof`) and print their hotspots. */
  cpuProf: boolean;
  /** How the chains scenario's heads are submitted (the no-op pre-fill is always bulk). @default 'single' */
  submit: SubmitMode;
  /**
   * Rounds: every system and scenario runs this many times, alternating, and the median round
   * is reported (server-rounds.ts; on a shared machine one round is noise). @default 1
   */
  repeat: number;
}

/** Flags of one PostgreSQL suite invocation. */
export type PgEngineArgs = ServerEngineArgs<PgSystem>;

const ALL_SCENARIOS: readonly PgScenario[] = [PgScenario.Noop, PgScenario.Chains];

/** The names of a comma-separated flag, in `known` order; all of `known` when absent. */
function pickList<T extends string>(flag: string, raw: string | undefined, known: readonly T[]): T[] {
  const names = (raw ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  const unknown = names.filter((n) => !(known as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`--${flag}: unknown ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return names.length === 0 ? [...known] : known.filter((k) => names.includes(k));
}

/**
 * Parses `--store <store> [--jobs 5000] [--chains 1000] [--concurrency 10] [--only a,b]
 * [--scenario noop,chains] [--cpu-prof] [--submit single|bulk] [--repeat N]`, `--only` naming some of
 * `systems`; unknown flags are errors, positionals are ignored.
 */
export function parseServerEngineArgs<S extends string>(argv: readonly string[], systems: readonly S[]): ServerEngineArgs<S> {
  const { values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      store: { type: 'string' },
      jobs: { type: 'string' },
      chains: { type: 'string' },
      concurrency: { type: 'string' },
      only: { type: 'string' },
      scenario: { type: 'string' },
      'cpu-prof': { type: 'boolean' },
      submit: { type: 'string' },
      repeat: { type: 'string' },
    },
  });
  return {
    jobs: positiveInt('jobs', values.jobs, 5000),
    chains: positiveInt('chains', values.chains, 1000),
    concurrency: positiveInt('concurrency', values.concurrency, 10),
    systems: pickList('only', values.only, systems),
    scenarios: pickList('scenario', values.scenario, ALL_SCENARIOS),
    cpuProf: values['cpu-prof'] ?? false,
    submit: parseSubmitMode(values.submit),
    repeat: positiveInt('repeat', values.repeat, 1),
  };
}

/** Parses the PostgreSQL suite's flags (see {@link parseServerEngineArgs}). */
export function parsePgEngineArgs(argv: readonly string[]): PgEngineArgs {
  return parseServerEngineArgs(argv, PG_SYSTEMS);
}
