/**
 * Command-line flags of the dashboard benchmark: how many finished runs to fill the store with,
 * how many requests to time per scenario, and which stores to measure.
 */
import { parseArgs } from 'node:util';
import { positiveInt } from '../engine/engine-args.ts';

/** Stores the dashboard bench can fill. */
export const DashboardStore = { Sqlite: 'sqlite', Postgres: 'postgres' } as const;
export type DashboardStore = (typeof DashboardStore)[keyof typeof DashboardStore];

/** Flags of one dashboard benchmark invocation. */
export interface DashboardArgs {
  /** Finished runs in the store. @default 100000 */
  runs: number;
  /** Timed requests per scenario (after a warm-up of a tenth as many). @default 200 */
  requests: number;
  /** Stores to measure; absent flag: SQLite, and PostgreSQL when a private cluster can be started. */
  stores: DashboardStore[] | 'default';
}

/** Parses `[--runs N] [--requests N] [--store sqlite|postgres]`; unknown flags are errors. */
export function parseDashboardArgs(argv: readonly string[]): DashboardArgs {
  const { values } = parseArgs({ args: [...argv], allowPositionals: true, options: { runs: { type: 'string' }, requests: { type: 'string' }, store: { type: 'string' } } });
  const store = values.store;
  if (store !== undefined && store !== DashboardStore.Sqlite && store !== DashboardStore.Postgres) {
    throw new Error(`--store must be sqlite or postgres, got "${store}"`);
  }
  return {
    runs: positiveInt('runs', values.runs, 100_000),
    requests: positiveInt('requests', values.requests, 200),
    stores: store === undefined ? 'default' : [store],
  };
}
