/**
 * Command-line flags of the engine benchmark, shared by the suite runner and each system's
 * child process so both read `--runs`/`--concurrency` the same way.
 */
import { parseArgs } from 'node:util';
import { parseSubmitMode, type SubmitMode } from './submit-heads.ts';

/** Flags of one engine benchmark invocation. */
export interface EngineArgs {
  /** Pipeline runs to measure (each is 5 stages). @default 2000 */
  runs: number;
  /** Per-stage concurrency (kiln policy `concurrency`, BullMQ Worker `concurrency`). @default 10 */
  concurrency: number;
  /** Systems to run; empty means all. */
  only: string[];
  /** How the measured runs are submitted. @default 'single' */
  submit: SubmitMode;
  /** Rounds, each running every system once in turn; each system reports its median round. @default 1 */
  repeat: number;
  /** Times kiln-sqlite's statements over the measured phase (sqlite-statement-timer.ts). @default false */
  sqlStatements: boolean;
  /** kiln runs with what `kiln serve` adds to every job: pino at info and the Prometheus metrics. @default false */
  serveObservability: boolean;
}

const DEFAULT_RUNS = 2000;
const DEFAULT_CONCURRENCY = 10;

/** Reads a `--name N` flag value that must be a positive integer; `fallback` when absent. */
export function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got "${raw}"`);
  return value;
}

/** Which store the engine suite runs against: the default trio, one PostgreSQL server, or one Redis server. */
export const EngineStore = { Default: 'default', Postgres: 'postgres', Redis: 'redis' } as const;
export type EngineStore = (typeof EngineStore)[keyof typeof EngineStore];

/**
 * Reads only `--store` (other flags are left to the store's own parser): absent means the
 * default suite (kiln-memory, kiln-sqlite, BullMQ); `postgres` selects the PostgreSQL suite,
 * `redis` the Redis one (kiln-redis vs BullMQ on one server).
 */
export function parseEngineStore(argv: readonly string[]): EngineStore {
  const { values } = parseArgs({ args: [...argv], allowPositionals: true, strict: false, options: { store: { type: 'string' } } });
  const raw = values.store;
  if (raw === undefined) return EngineStore.Default;
  if (raw === EngineStore.Postgres || raw === EngineStore.Redis) return raw;
  throw new Error(`--store must be "postgres" or "redis" (or absent for the default suite), got "${String(raw)}"`);
}

/** Parses `--runs N --concurrency C [--only a,b] [--submit single|bulk] [--repeat N] [--sql-statements] [--serve-observability]`; unknown flags are errors, positionals are ignored. */
export function parseEngineArgs(argv: readonly string[]): EngineArgs {
  const { values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      runs: { type: 'string' },
      concurrency: { type: 'string' },
      only: { type: 'string' },
      submit: { type: 'string' },
      repeat: { type: 'string' },
      'sql-statements': { type: 'boolean' },
      'serve-observability': { type: 'boolean' },
    },
  });
  return {
    runs: positiveInt('runs', values.runs, DEFAULT_RUNS),
    concurrency: positiveInt('concurrency', values.concurrency, DEFAULT_CONCURRENCY),
    only: (values.only ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0),
    submit: parseSubmitMode(values.submit),
    repeat: positiveInt('repeat', values.repeat, 1),
    sqlStatements: values['sql-statements'] ?? false,
    serveObservability: values['serve-observability'] ?? false,
  };
}
