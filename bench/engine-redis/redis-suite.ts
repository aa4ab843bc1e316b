/**
 * `npm run bench -- engine --store redis`: kiln on the Redis store vs BullMQ on ONE redis-server,
 * each system and scenario in its own child process. The server is a private one with AOF
 * (`appendonly yes`, `appendfsync everysec`, no RDB; test/support/redis-server.ts) unless
 * `KILN_REDIS_URL` names one; its persistence settings are read back and printed, the same for
 * both systems. Before each child the server is emptied and its AOF rewritten, so neither system
 * inherits the other's data or an AOF rewrite. Prints a table per scenario, the ratios
 * kiln/BullMQ, and where the time went (commands sent per item, script time and CPU of the
 * server, CPU of the client); writes the JSON report.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedis } from '../../test/support/redis-server.ts';
import { parseInfo } from '../../src/stores/redis/server-settings.ts';
import { describeMachine, type MachineInfo } from '../engine/machine-info.ts';
import { runResultChild } from '../engine/result-child.ts';
import { BULK_CHUNK_SIZE, SubmitMode } from '../engine/submit-heads.ts';
import { formatTextTable } from '../engine/text-table.ts';
import { PgScenario } from '../engine-pg/pg-bench-result.ts';
import { formatHotspots } from '../engine-pg/pg-report-format.ts';
import type { RedisEngineArgs } from './redis-engine-args.ts';
import type { RedisBenchResult, RedisSystem } from './redis-bench-result.ts';
import { REDIS_URL_ENV } from './redis-child-args.ts';
import { formatRounds, medianRatio, medianRows, type SkippedRound } from '../engine-pg/server-rounds.ts';

/** A system that produced no numbers for a scenario, and why. */
export type RedisSkipped = SkippedRound<RedisSystem>;

/** The JSON written to `bench/results/engine-redis-<timestamp>.json`. */
export interface RedisReport {
  suite: 'engine-redis';
  startedAt: string;
  machine: MachineInfo;
  server: { source: 'private redis-server' | 'KILN_REDIS_URL'; version: string; settings: Record<string, string> };
  jobs: number;
  chains: number;
  concurrency: number;
  submit: SubmitMode;
  /** Rounds run; `results` holds every round's rows, the tables and ratios use the median round. */
  repeat: number;
  results: (RedisBenchResult | RedisSkipped)[];
  /** The median round's items/s of a kiln system divided by BullMQ's, per scenario, when both ran. */
  ratios: { noop: KilnRatios; chains: KilnRatios };
}

/** kiln's items/s over BullMQ's in one scenario. */
export interface KilnRatios {
  kilnRedis?: number;
  kilnRedisPrefetch?: number;
}

const CHILD_TIMEOUT_MS = 170_000;
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const PROFILE_DIR = fileURLToPath(new URL('../results/profiles/', import.meta.url));
/** Settings recorded with every report: persistence decides what a crash loses, and costs. */
const RECORDED_SETTINGS = ['appendonly', 'appendfsync', 'save', 'maxmemory-policy', 'io-threads'];
/** The issue's target for kiln-redis / BullMQ on chains. */
const CHAINS_TARGET = 2;

async function describeServer(admin: Redis): Promise<{ version: string; settings: Record<string, string> }> {
  const version = parseInfo(await admin.info('server')).get('redis_version') ?? 'unknown';
  const flat = (await admin.call('CONFIG', 'GET', ...RECORDED_SETTINGS)) as string[];
  const settings: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) settings[String(flat[i])] = String(flat[i + 1]);
  return { version, settings };
}

/** Empties the server and rewrites its AOF (waiting for the rewrite), so each child starts alike. */
async function resetServer(admin: Redis): Promise<void> {
  await admin.flushall('SYNC');
  await admin.bgrewriteaof().catch(() => undefined);
  for (let i = 0; i < 500; i++) {
    const persistence = parseInfo(await admin.info('persistence'));
    if (persistence.get('aof_rewrite_in_progress') !== '1' && persistence.get('aof_rewrite_scheduled') !== '1') return;
    await delay(20);
  }
}

function childScript(system: RedisSystem): string {
  return fileURLToPath(new URL(`./${system === 'bullmq' ? 'bullmq-redis' : 'kiln-redis'}.ts`, import.meta.url));
}

async function runOne(url: string, admin: Redis, args: RedisEngineArgs, system: RedisSystem, scenario: PgScenario): Promise<RedisBenchResult | RedisSkipped> {
  const count = scenario === PgScenario.Noop ? args.jobs : args.chains;
  await resetServer(admin);
  try {
    const result = (await runResultChild({
      script: childScript(system),
      args: ['--system', system, '--scenario', scenario, '--count', String(count), '--concurrency', String(args.concurrency), '--submit', args.submit],
      env: { [REDIS_URL_ENV]: url, ...(args.cpuProf && system !== 'bullmq' ? { KILN_BENCH_CPU_PROF_DIR: PROFILE_DIR } : {}) },
      timeoutMs: CHILD_TIMEOUT_MS,
      label: `${system} ${scenario}`,
    })) as RedisBenchResult;
    console.log(`${system} ${scenario}: ${result.itemsPerSec} ${scenario === PgScenario.Noop ? 'jobs/s' : 'chains/s'} in ${result.elapsedMs} ms`);
    return result;
  } catch (err) {
    console.error(`${system} ${scenario}: failed: ${(err as Error).message}`);
    return { system, scenario, skipped: `failed: ${(err as Error).message}` };
  }
}

function ratiosOf(results: RedisReport['results'], scenario: PgScenario): KilnRatios {
  return {
    kilnRedis: medianRatio(results, scenario, 'kiln-redis', 'bullmq'),
    kilnRedisPrefetch: medianRatio(results, scenario, 'kiln-redis-prefetch', 'bullmq'),
  };
}

/** One table per scenario: throughput, then where the time went per item. */
export function formatRedisTable(scenario: PgScenario, rows: readonly (RedisBenchResult | RedisSkipped)[]): string {
  const noop = scenario === PgScenario.Noop;
  const per = noop ? 'job' : 'chain';
  const header = [
    noop ? 'no-op jobs' : '5-stage chains',
    noop ? 'jobs/s' : 'chains/s',
    'elapsed ms',
    `cmds sent/${per}`,
    `scripts/${per}`,
    `script µs/${per}`,
    `server cmds/${per}`,
    `server CPU ms/${per}`,
    `client CPU ms/${per}`,
    'server busy',
    'client busy',
    'peak RSS MB',
  ];
  const body = rows.map((r) => {
    if ('skipped' in r) return [r.system, `skipped: ${r.skipped}`];
    return [
      r.system,
      r.itemsPerSec.toFixed(1),
      String(r.elapsedMs),
      r.clientCommandsPerItem.toFixed(2),
      r.scriptCallsPerItem.toFixed(2),
      r.scriptUsecPerItem.toFixed(0),
      r.serverCommandsPerItem.toFixed(1),
      r.serverCpuMsPerItem.toFixed(3),
      r.clientCpuMsPerItem.toFixed(3),
      r.serverBusy.toFixed(2),
      r.clientBusy.toFixed(2),
      r.peakRssMb.toFixed(1),
    ];
  });
  return formatTextTable(header, body);
}

function formatRatios(ratios: RedisReport['ratios']): string {
  const lines: string[] = [];
  const line = (label: string, value: number | undefined, target?: number): void => {
    if (value === undefined) return;
    lines.push(`${label}: ${value.toFixed(2)}x${target === undefined ? '' : ` (target >= ${target}x: ${value >= target ? 'met' : 'NOT met'})`}`);
  };
  line('no-op   kiln-redis / bullmq', ratios.noop.kilnRedis);
  line('chains  kiln-redis / bullmq', ratios.chains.kilnRedis, CHAINS_TARGET);
  line('no-op   kiln-redis-prefetch / bullmq', ratios.noop.kilnRedisPrefetch);
  line('chains  kiln-redis-prefetch / bullmq', ratios.chains.kilnRedisPrefetch, CHAINS_TARGET);
  return lines.join('\n');
}

function formatCommands(results: RedisReport['results']): string {
  const lines: string[] = [];
  for (const r of results) {
    if ('skipped' in r) continue;
    const sent = Object.entries(r.extra['clientCommands'] as Record<string, number>)
      .slice(0, 6)
      .map(([name, calls]) => `${name} ${(calls / r.count).toFixed(2)}`)
      .join(', ');
    lines.push(`${r.system} ${r.scenario}: sent per ${r.scenario === PgScenario.Noop ? 'job' : 'chain'}: ${sent}`);
  }
  return lines.join('\n');
}

function printReport(report: RedisReport): void {
  for (const scenario of [PgScenario.Noop, PgScenario.Chains]) {
    const rows = medianRows(report.results, scenario);
    if (rows.length > 0) console.log(`\n${formatRedisTable(scenario, rows)}`);
  }
  const ratios = formatRatios(report.ratios);
  if (ratios) console.log(`\n${ratios}`);
  const rounds = formatRounds(report.results, [PgScenario.Noop, PgScenario.Chains], report.repeat);
  if (rounds) console.log(`\n${rounds}`);
  console.log(`\n${formatCommands([PgScenario.Noop, PgScenario.Chains].flatMap((scenario) => medianRows(report.results, scenario)))}`);
  for (const r of report.results) {
    const profile = 'skipped' in r ? undefined : r.extra['cpuProfile'];
    if (profile) console.log(`\n${formatHotspots(`${r.system} ${r.scenario}`, profile)}`);
  }
  console.log('\nno-op: pre-filled jobs, timed from the first handler start until the last completion was acknowledged;');
  console.log(`chains: timed from the first submission (heads submitted ${report.submit === SubmitMode.Bulk ? `with each system's bulk API, ${BULK_CHUNK_SIZE} per call` : 'one by one, each awaited'}).`);
  console.log('cmds sent = requests the Node process sent (ioredis); scripts and server cmds from INFO commandstats (server cmds include those run inside scripts);');
  console.log('CPU = user + sys over the measured phase; busy = CPU / wall time (1.00 = one core).');
}

/** Runs the selected systems and scenarios on one server; prints and writes the report. */
export async function runRedisSuite(args: RedisEngineArgs): Promise<{ report: RedisReport; path: string }> {
  const startedAt = new Date().toISOString();
  const external = Boolean(process.env['KILN_REDIS_URL']);
  const server = await startRedis();
  const admin = new Redis(server.url, { maxRetriesPerRequest: 2 });
  try {
    const info = await describeServer(admin);
    const s = info.settings;
    console.log(`engine --store redis: ${args.jobs} no-op jobs, ${args.chains} 5-stage chains, concurrency ${args.concurrency} per queue`);
    console.log(`submit: ${args.submit}${args.repeat > 1 ? `, ${args.repeat} rounds (tables: the median round)` : ''}`);
    console.log(
      `server (both systems): ${external ? 'KILN_REDIS_URL' : 'private redis-server'}, Redis ${info.version}, appendonly ${s['appendonly']}, appendfsync ${s['appendfsync']}, save "${s['save']}", maxmemory-policy ${s['maxmemory-policy']}`,
    );
    const results: RedisReport['results'] = [];
    for (let round = 1; round <= args.repeat; round++) {
      if (args.repeat > 1) console.log(`round ${round} of ${args.repeat}`);
      for (const scenario of args.scenarios) {
        for (const system of args.systems) results.push(await runOne(server.url, admin, args, system, scenario));
      }
    }
    const report: RedisReport = {
      suite: 'engine-redis',
      startedAt,
      machine: describeMachine(),
      server: { source: external ? 'KILN_REDIS_URL' : 'private redis-server', ...info },
      jobs: args.jobs,
      chains: args.chains,
      concurrency: args.concurrency,
      submit: args.submit,
      repeat: args.repeat,
      results,
      ratios: { noop: ratiosOf(results, PgScenario.Noop), chains: ratiosOf(results, PgScenario.Chains) },
    };
    printReport(report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    const path = `${RESULTS_DIR}engine-redis-${startedAt.replace(/[:.]/g, '-')}.json`;
    writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`wrote ${path}`);
    return { report, path };
  } finally {
    admin.disconnect();
    await server.stop();
  }
}
