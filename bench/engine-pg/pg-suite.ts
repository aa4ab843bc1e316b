/**
 * `npm run bench -- engine --store postgres`: kiln, graphile-worker (defaults and batched) and
 * pg-boss on ONE PostgreSQL server, each system and scenario in its own child process and its
 * own fresh schema. Starts a private cluster (fsync and synchronous_commit on) unless
 * `KILN_PG_URL` names a server, prints a table per scenario plus ratios, writes the JSON report.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startPostgres } from '../../test/support/postgres-cluster.ts';
import { describeMachine, type MachineInfo } from '../engine/machine-info.ts';
import { runResultChild } from '../engine/result-child.ts';
import { BULK_CHUNK_SIZE, SubmitMode } from '../engine/submit-heads.ts';
import type { PgEngineArgs } from './pg-engine-args.ts';
import { PgScenario, type PgBenchResult, type PgSystem } from './pg-bench-result.ts';
import { formatHotspots, formatRatios, formatScenarioTable, type PgRatios } from './pg-report-format.ts';
import { formatRounds, medianRatio, medianRows, type SkippedRound } from './server-rounds.ts';

/** A system that produced no numbers for a scenario, and why. */
export type PgSkipped = SkippedRound<PgSystem>;

/** The JSON written to `bench/results/engine-postgres-<timestamp>.json`. */
export interface PgReport {
  suite: 'engine-postgres';
  startedAt: string;
  machine: MachineInfo;
  server: { source: 'private cluster' | 'KILN_PG_URL'; version: string; settings: Record<string, string> };
  jobs: number;
  chains: number;
  concurrency: number;
  /** How every system submitted the chains scenario's heads (the no-op pre-fill is always bulk). */
  submit: SubmitMode;
  /** Rounds run; `results` holds every round's rows, the tables and ratios use the median round. */
  repeat: number;
  results: (PgBenchResult | PgSkipped)[];
  /** The median round's items/s of a kiln system divided by another's, per scenario, when both ran. */
  ratios: PgRatios;
}

const CHILD_TIMEOUT_MS = 170_000;
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const PROFILE_DIR = fileURLToPath(new URL('../results/profiles/', import.meta.url));
/** Server settings recorded with every report; durability must stay on for honest numbers. */
const RECORDED_SETTINGS = ['fsync', 'synchronous_commit', 'wal_level', 'shared_buffers', 'max_connections'];

function childScript(system: PgSystem): string {
  const name = system.startsWith('kiln') ? 'kiln-pg' : system.startsWith('graphile') ? 'graphile-worker' : 'pg-boss';
  return fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
}

/** Runs one statement on the server with a short-lived connection. */
async function withServer<T>(url: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

async function describeServer(url: string): Promise<{ version: string; settings: Record<string, string> }> {
  return withServer(url, async (client) => {
    const version = (await client.query<{ v: string }>('select version() as v')).rows[0]?.v ?? 'unknown';
    const { rows } = await client.query<{ name: string; setting: string; unit: string | null }>(
      'select name, setting, unit from pg_settings where name = any($1)',
      [RECORDED_SETTINGS],
    );
    return { version, settings: Object.fromEntries(rows.map((r) => [r.name, r.unit ? `${r.setting} ${r.unit}` : r.setting])) };
  });
}

/** Each child starts from a clean checkpoint so one system's WAL is not flushed on another's clock. */
async function checkpoint(url: string): Promise<void> {
  // A non-superuser KILN_PG_URL may not checkpoint; the run is still valid, only less isolated.
  await withServer(url, (client) => client.query('checkpoint')).catch(() => undefined);
}

async function runOne(url: string, args: PgEngineArgs, system: PgSystem, scenario: PgScenario): Promise<PgBenchResult | PgSkipped> {
  const count = scenario === PgScenario.Noop ? args.jobs : args.chains;
  const profile = args.cpuProf && system.startsWith('kiln');
  await checkpoint(url);
  try {
    const result = (await runResultChild({
      script: childScript(system),
      args: ['--system', system, '--scenario', scenario, '--count', String(count), '--concurrency', String(args.concurrency), '--submit', args.submit],
      env: { KILN_PG_URL: url, ...(profile ? { KILN_BENCH_CPU_PROF_DIR: PROFILE_DIR } : {}) },
      timeoutMs: CHILD_TIMEOUT_MS,
      label: `${system} ${scenario}`,
    })) as PgBenchResult;
    const unit = scenario === PgScenario.Noop ? 'jobs/s' : 'chains/s';
    console.log(`${system} ${scenario}: ${result.itemsPerSec} ${unit} in ${result.elapsedMs} ms, ${result.xactsPerItem} commits per ${scenario === PgScenario.Noop ? 'job' : 'chain'}`);
    return result;
  } catch (err) {
    console.error(`${system} ${scenario}: failed: ${(err as Error).message}`);
    return { system, scenario, skipped: `failed: ${(err as Error).message}` };
  }
}

function computeRatios(results: PgReport['results']): PgRatios {
  const per = (scenario: PgScenario): PgRatios['noop'] => ({
    kilnOverGraphileBatched: medianRatio(results, scenario, 'kiln', 'graphile-batched'),
    kilnPrefetchOverGraphileBatched: medianRatio(results, scenario, 'kiln-prefetch', 'graphile-batched'),
    kilnOverGraphileDefault: medianRatio(results, scenario, 'kiln', 'graphile-default'),
    kilnOverGraphileBatchedState: medianRatio(results, scenario, 'kiln', 'graphile-batched-state'),
    kilnPrefetchOverGraphileBatchedState: medianRatio(results, scenario, 'kiln-prefetch', 'graphile-batched-state'),
    kilnOverPgBoss: medianRatio(results, scenario, 'kiln', 'pg-boss'),
  });
  return { noop: per(PgScenario.Noop), chains: per(PgScenario.Chains) };
}

function printReport(report: PgReport): void {
  for (const scenario of [PgScenario.Noop, PgScenario.Chains]) {
    const rows = medianRows(report.results, scenario);
    if (rows.length > 0) console.log(`\n${formatScenarioTable(scenario, rows)}`);
  }
  const ratios = formatRatios(report.ratios);
  if (ratios) console.log(`\n${ratios}`);
  const rounds = formatRounds(report.results, [PgScenario.Noop, PgScenario.Chains], report.repeat);
  if (rounds) console.log(`\n${rounds}`);
  for (const r of report.results) {
    const profile = 'skipped' in r ? undefined : r.extra['cpuProfile'];
    if (profile) console.log(`\n${formatHotspots(`${r.system} ${r.scenario}`, profile)}`);
  }
  console.log('\nno-op: pre-filled jobs, timed from the first handler start until the database shows none left;');
  console.log(`chains: timed from the first submission (heads submitted ${report.submit === SubmitMode.Bulk ? `with each system's bulk API, ${BULK_CHUNK_SIZE} per call` : 'one by one, each awaited'}).`);
  console.log('commits = pg_stat_database.xact_commit over the measured phase (all its connections closed first); xids = write transactions;');
  console.log('rows/job = rows inserted + updated + deleted (pg_stat_user_tables) over the phase, per job (per table in the JSON report).');
  console.log('CPU = user + sys over the phase (its store or runner start and stop included): the benchmark process, and the PostgreSQL server (postmaster and backends, from /proc; n/a when not local).');
}

/** Runs the selected systems and scenarios one after another; prints and writes the report. */
export async function runPgSuite(args: PgEngineArgs): Promise<{ report: PgReport; path: string }> {
  const startedAt = new Date().toISOString();
  const external = process.env['KILN_PG_URL'] !== undefined && process.env['KILN_PG_URL'] !== '';
  const server = await startPostgres();
  try {
    const info = await describeServer(server.url);
    console.log(`engine --store postgres: ${args.jobs} no-op jobs, ${args.chains} 5-stage chains, concurrency ${args.concurrency} per queue`);
    console.log(`submit: ${args.submit}${args.repeat > 1 ? `, ${args.repeat} rounds (tables: the median round)` : ''}`);
    console.log(`server: ${external ? 'KILN_PG_URL' : 'private cluster'}, ${info.version.split(' on ')[0]}, fsync=${info.settings['fsync']}, synchronous_commit=${info.settings['synchronous_commit']}`);
    const results: PgReport['results'] = [];
    for (let round = 1; round <= args.repeat; round++) {
      if (args.repeat > 1) console.log(`round ${round} of ${args.repeat}`);
      for (const scenario of args.scenarios) {
        for (const system of args.systems) results.push(await runOne(server.url, args, system, scenario));
      }
    }
    const report: PgReport = {
      suite: 'engine-postgres',
      startedAt,
      machine: describeMachine(),
      server: { source: external ? 'KILN_PG_URL' : 'private cluster', ...info },
      jobs: args.jobs,
      chains: args.chains,
      concurrency: args.concurrency,
      submit: args.submit,
      repeat: args.repeat,
      results,
      ratios: computeRatios(results),
    };
    printReport(report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    const path = `${RESULTS_DIR}engine-postgres-${startedAt.replace(/[:.]/g, '-')}.json`;
    writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`wrote ${path}`);
    return { report, path };
  } finally {
    await server.stop();
  }
}
