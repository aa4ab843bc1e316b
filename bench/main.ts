/**
 * Benchmark entry point: `npm run bench -- <suite> [flags]`.
 *   engine   5-stage no-op pipeline: kiln (memory, SQLite) vs BullMQ (private redis-server) vs plainjob (SQLite).
 *            Flags: --runs N (default 2000), --concurrency C (default 10), --only a,b,
 *            --repeat N (N alternating rounds, each system reported by its median round),
 *            --submit single|bulk (default single: runs submitted one by one, each awaited;
 *            bulk: each system's bulk API, 500 per call, so the measure is processing-bound)
 *            Systems: kiln-memory, kiln-sqlite, bullmq, plainjob. Writes bench/results/engine-<timestamp>.json.
 *   engine --store postgres
 *            kiln vs graphile-worker (defaults, batched) vs pg-boss on one PostgreSQL (a private
 *            cluster, or KILN_PG_URL): pre-filled no-op jobs/s and 5-stage chains/s.
 *            Flags: --jobs N (default 5000), --chains N (default 1000), --concurrency C (default 10),
 *            --only kiln,graphile-default,graphile-batched,graphile-batched-state,pg-boss, --scenario noop,chains, --cpu-prof
 *            (profile the kiln children, print hotspots), --submit single|bulk (chains heads; the
 *            no-op pre-fill is always bulk and untimed), --repeat N (alternating rounds, the median one
 *            reported). Writes bench/results/engine-postgres-<timestamp>.json.
 *   engine --store redis
 *            kiln on the Redis store vs BullMQ on ONE redis-server (a private one with AOF
 *            appendfsync everysec, or KILN_REDIS_URL; the settings are printed): pre-filled no-op
 *            jobs/s and 5-stage chains/s, the ratios, and commands/script time/CPU per item.
 *            Flags: --jobs N (default 5000), --chains N (default 1000), --concurrency C (default 10),
 *            --only kiln-redis,kiln-redis-prefetch,bullmq, --scenario noop,chains, --submit single|bulk,
 *            --cpu-prof, --repeat N (alternating rounds, the median one reported).
 *            Writes bench/results/engine-redis-<timestamp>.json.
 *   redis-scripts
 *            the Redis store's script time and commands per job, phase by phase (submit, claim,
 *            commit), with no worker: a load-independent measure of the layout's server cost.
 *            Flags: --runs N (5-stage runs, default 2000), --batch N (jobs per claim/commit, default 25).
 *   qr       (a) raw renders/s (kiln's renderer, node-qrcode) vs uncached renders/s through a real
 *            `kiln serve` over HTTP, (b) cached GET /v1/qr/:hash vs a fastify hello-world (autocannon).
 *            Flags: --connections C (default 32), --duration S (default 10), --warmup S (default 3),
 *            --log-level L (kiln serve, default warn), --cpu-prof (profile kiln serve's uncached phase).
 *            Writes bench/results/qr-<timestamp>.json.
 *   dashboard  the dashboard's reads on a large store: fills SQLite (and PostgreSQL when a private
 *            cluster or KILN_PG_URL is available) with finished runs through the store's ports, then
 *            times GET /v1/runs (first page, filtered pages, a deep page by cursor), dead letters by
 *            code and queue activity over real HTTP: p50/p99 against the 100 ms first-page target.
 *            Flags: --runs N (default 100000), --requests N (default 200), --store sqlite|postgres.
 *            Writes bench/results/dashboard-<timestamp>.json.
 *   scale    chains/s and GET /v1/runs p50/p99 with 0, 100,000 and 1,000,000 finished runs already in
 *            the store (SQLite and PostgreSQL), the store's size on disk, and chains/s with 1, 2 and 4
 *            worker processes on one PostgreSQL (workers' and server CPU, commits per chain).
 *            Flags: --sizes a,b,c, --chains N (default 1000), --requests N (default 200),
 *            --store sqlite|postgres, --workers 1,2,4|none, --repeat N (chain rounds per measurement,
 *            median reported; default 3). Writes bench/results/scale-<timestamp>.json.
 */
import { parseDashboardArgs } from './dashboard/dashboard-args.ts';
import { EngineStore, parseEngineArgs, parseEngineStore } from './engine/engine-args.ts';
import { runEngineSuite } from './engine/engine-suite.ts';
import { parsePgEngineArgs } from './engine-pg/pg-engine-args.ts';
import { parseRedisEngineArgs } from './engine-redis/redis-engine-args.ts';
import { runRedisSuite } from './engine-redis/redis-suite.ts';
import { parseScriptCostArgs, runScriptCost } from './engine-redis/script-cost.ts';
import { runPgSuite } from './engine-pg/pg-suite.ts';
import { parseQrArgs } from './qr/qr-args.ts';
import { runQrSuite } from './qr/qr-suite.ts';
import { parseScaleArgs } from './scale/scale-args.ts';

const USAGE = [
  'usage: npm run bench -- engine [--runs 2000] [--concurrency 10] [--only kiln-memory,kiln-sqlite,bullmq,plainjob] [--submit single|bulk] [--repeat N] [--sql-statements] [--serve-observability]',
  '       npm run bench -- engine --store postgres [--jobs 5000] [--chains 1000] [--concurrency 10]',
  '                               [--only kiln,kiln-prefetch,graphile-default,graphile-batched,graphile-batched-state,pg-boss] [--scenario noop,chains]',
  '                               [--cpu-prof] [--submit single|bulk] [--repeat N]',
  '       npm run bench -- engine --store redis [--jobs 5000] [--chains 1000] [--concurrency 10]',
  '                               [--only kiln-redis,kiln-redis-prefetch,bullmq] [--scenario noop,chains] [--submit single|bulk]',
  '                               [--cpu-prof] [--repeat N]',
  '       npm run bench -- redis-scripts [--runs 2000] [--batch 25]',
  '       npm run bench -- qr [--connections 32] [--duration 10] [--warmup 3] [--log-level warn] [--cpu-prof]',
  '       npm run bench -- dashboard [--runs 100000] [--requests 200] [--store sqlite|postgres]',
  '       npm run bench -- scale [--sizes 0,100000,1000000] [--chains 1000] [--requests 200] [--store sqlite|postgres] [--workers 1,2,4|none] [--repeat 3]',
].join('\n');

/** Runs the engine suite for the chosen store; true when some system failed. */
async function runEngine(argv: readonly string[]): Promise<boolean> {
  const store = parseEngineStore(argv);
  if (store === EngineStore.Postgres) {
    const { report } = await runPgSuite(parsePgEngineArgs(argv));
    return report.results.some((r) => 'skipped' in r);
  }
  if (store === EngineStore.Redis) {
    const { report } = await runRedisSuite(parseRedisEngineArgs(argv));
    return report.results.some((r) => 'skipped' in r);
  }
  const { report } = await runEngineSuite(parseEngineArgs(argv));
  // A failed system leaves a "skipped: failed ..." row; the exit code says so too.
  return report.results.some((r) => 'skipped' in r && r.skipped.startsWith('failed'));
}

/** Runs the QR suite; true when some phase failed. */
async function runQr(argv: readonly string[]): Promise<boolean> {
  const { report } = await runQrSuite(parseQrArgs(argv));
  return [report.raw, report.nodeQrcode, report.kilnUncached, report.kilnCached, report.fastifyHello].some((phase) => 'failed' in phase);
}

/**
 * Runs the dashboard suite; true when a first page missed its target. Imported on demand: it
 * loads the HTTP app (fastify), which the other suites' processes need not load.
 */
async function runDashboard(argv: readonly string[]): Promise<boolean> {
  const args = parseDashboardArgs(argv);
  const { runDashboardSuite } = await import('./dashboard/dashboard-suite.ts');
  return (await runDashboardSuite(args)).missed;
}

/** Runs the scale suite; true when chains/s on the largest store fell below its target. Imported on demand (it loads fastify). */
async function runScale(argv: readonly string[]): Promise<boolean> {
  const args = parseScaleArgs(argv);
  const { runScaleSuite } = await import('./scale/scale-suite.ts');
  return (await runScaleSuite(args)).missed;
}

/** Runs the Redis script-cost suite (never fails on a figure: it only reports). */
async function runRedisScripts(argv: readonly string[]): Promise<boolean> {
  await runScriptCost(parseScriptCostArgs(argv));
  return false;
}

const SUITES: Readonly<Record<string, (argv: readonly string[]) => Promise<boolean>>> = {
  engine: runEngine,
  'redis-scripts': runRedisScripts,
  qr: runQr,
  dashboard: runDashboard,
  scale: runScale,
};

const [suite, ...rest] = process.argv.slice(2);
const run = suite === undefined ? undefined : SUITES[suite];
if (run) {
  try {
    if (await run(rest)) process.exitCode = 1;
  } catch (err) {
    console.error((err as Error).message);
    console.error(USAGE);
    process.exitCode = 2;
  }
} else {
  console.error(suite ? `unknown suite "${suite}"` : 'no suite given');
  console.error(USAGE);
  process.exitCode = 2;
}
