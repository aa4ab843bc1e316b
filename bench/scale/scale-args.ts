/**
 * Flags of `npm run bench -- scale`: the store sizes to measure at, the chains timed at each
 * size, the requests timed per read, the stores, and the worker-process counts of the
 * PostgreSQL curve.
 */
import { parseArgs } from 'node:util';
import { positiveInt } from '../engine/engine-args.ts';
import { DashboardStore } from '../dashboard/dashboard-args.ts';

export interface ScaleArgs {
  /** Finished runs already in the store at each measurement, ascending. @default [0, 100000, 1000000] */
  sizes: number[];
  /** 5-stage chains timed at each size. @default 1000 */
  chains: number;
  /** Timed `GET /v1/runs` per read scenario. @default 200 */
  requests: number;
  /** Stores to measure. @default ['sqlite', 'postgres'] */
  stores: DashboardStore[];
  /** Worker-process counts of the PostgreSQL curve; empty skips it. @default [1, 2, 4] */
  workers: number[];
  /** Chain rounds at each size and after the retention pass; each reports its median round. @default 3 */
  repeat: number;
}

function intList(name: string, raw: string | undefined, fallback: number[], min: number): number[] {
  if (raw === undefined) return fallback;
  const values = raw.split(',').map((s) => Number(s.trim()));
  const bad = values.find((v) => !Number.isInteger(v) || v < min);
  if (bad !== undefined) throw new Error(`--${name} takes integers >= ${min} separated by commas, got "${raw}"`);
  return values;
}

/** Parses `[--sizes a,b,c] [--chains N] [--requests N] [--store sqlite|postgres] [--workers 1,2,4 | --workers none] [--repeat N]`. */
export function parseScaleArgs(argv: readonly string[]): ScaleArgs {
  const { values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { sizes: { type: 'string' }, chains: { type: 'string' }, requests: { type: 'string' }, store: { type: 'string' }, workers: { type: 'string' }, repeat: { type: 'string' } },
  });
  const store = values.store;
  if (store !== undefined && store !== DashboardStore.Sqlite && store !== DashboardStore.Postgres) throw new Error(`--store must be sqlite or postgres, got "${store}"`);
  return {
    sizes: [...intList('sizes', values.sizes, [0, 100_000, 1_000_000], 0)].sort((a, b) => a - b),
    chains: positiveInt('chains', values.chains, 1_000),
    requests: positiveInt('requests', values.requests, 200),
    stores: store === undefined ? [DashboardStore.Sqlite, DashboardStore.Postgres] : [store],
    workers: values.workers === 'none' ? [] : intList('workers', values.workers, [1, 2, 4], 1),
    repeat: positiveInt('repeat', values.repeat, 3),
  };
}
