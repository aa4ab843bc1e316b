/**
 * `npm run chaos`: the crash-point chaos harness (harness.ts) from the command line.
 * Options: `--seed N` (default 1), `--store sqlite|postgres|redis` (default sqlite),
 * `--per-point N` kills at each crash point (default 20), `--workers N` (default 4),
 * `--restarts N` store restarts (default 3), `--faults` / `--no-faults` (the scenarios of
 * faults/index.ts; default on). Prints progress and one summary; exits 1 on any violation or on a
 * crash point hit fewer times than planned.
 */
import { parseArgs } from 'node:util';
import { sharedPostgres } from '../postgres-cluster.ts';
import { sharedRedis } from '../redis-server.ts';
import { formatChaosReport, runChaos, type ChaosStore } from './harness.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    store: { type: 'string', default: 'sqlite' },
    'per-point': { type: 'string', default: '20' },
    workers: { type: 'string', default: '4' },
    restarts: { type: 'string', default: '3' },
    faults: { type: 'boolean', default: true },
    'no-faults': { type: 'boolean', default: false },
  },
});

function integer(name: string, text: string | undefined, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, not ${text}`);
  return n;
}

const store = values.store as ChaosStore;
if (!['sqlite', 'postgres', 'redis'].includes(store)) throw new Error(`--store must be sqlite, postgres or redis, not ${values.store}`);
// A signal ends the process through its exit hooks: kiln processes killed, servers stopped.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
const t0 = Date.now();
const log = (line: string): void => console.log(`  [${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}`);
try {
  const report = await runChaos({
    seed: integer('seed', values.seed, 0),
    store,
    perPoint: integer('per-point', values['per-point'], 1),
    workers: integer('workers', values.workers, 1),
    restarts: integer('restarts', values.restarts, 0),
    faults: values.faults === true && values['no-faults'] !== true,
    log,
  });
  console.log(formatChaosReport(report));
  process.exitCode = report.violations.length === 0 ? 0 : 1;
} finally {
  // The servers this process started (a PostgreSQL cluster is also stopped by its exit hook).
  if (store === 'redis') await (await sharedRedis()).stop();
  if (store === 'postgres') await (await sharedPostgres()).stop();
}
