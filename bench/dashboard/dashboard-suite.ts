/**
 * `npm run bench -- dashboard`: how fast the dashboard's reads answer on a large store. Fills a
 * SQLite store (and a PostgreSQL one on a private cluster, or `KILN_PG_URL`, when available) with
 * finished runs through the store's own ports (fill-runs.ts), then serves it with the real HTTP app
 * (`buildApp` listening on a port, a fresh store connection on the real clock) and times the runs
 * list — first page, filtered pages, a deep page by cursor — and the dashboard's other polls,
 * against the 100 ms target for the first page. Writes bench/results/dashboard-<timestamp>.json.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { createMetrics } from '../../src/observe/metrics.ts';
import { findBinDir } from '../../test/support/postgres-cluster.ts';
import { describeMachine, type MachineInfo } from '../engine/machine-info.ts';
import { formatTextTable } from '../engine/text-table.ts';
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from './bench-stores.ts';
import { DashboardStore, type DashboardArgs } from './dashboard-args.ts';
import { fillRuns, type FillResult } from './fill-runs.ts';
import { timeRequests, type ScenarioTiming } from './measure-http.ts';

/** The first page of the runs list must answer within this (issue 10). */
export const FIRST_PAGE_TARGET_MS = 100;
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const HOUR = 3_600_000;

/** One store's fill and timings. */
interface StoreResult {
  store: DashboardStore;
  fill: { runs: number; elapsedMs: number; method: string };
  scenarios: ScenarioTiming[];
}

/** The requests timed on a store filled as `fill` says. */
function scenarios(fill: FillResult): { name: string; path: string }[] {
  const iso = (ms: number): string => encodeURIComponent(new Date(ms).toISOString());
  const oldest = fill.newestCreatedAt - Math.ceil(fill.runs / 1_000) * 10 * 60_000;
  const deep = fill.ids[Math.floor(fill.ids.length / 10)] ?? '';
  return [
    { name: 'runs: first page', path: '/v1/runs?limit=50' },
    { name: 'runs: status=failed', path: '/v1/runs?status=failed&limit=50' },
    { name: 'runs: status=succeeded, pipeline=bench.audit', path: '/v1/runs?status=succeeded&pipeline=bench.audit&limit=50' },
    { name: 'runs: tenant=tenant-4, status=dead_lettered', path: '/v1/runs?tenant=tenant-4&status=dead_lettered&limit=50' },
    { name: 'runs: created in the last hour', path: `/v1/runs?createdAfter=${iso(fill.newestCreatedAt - HOUR)}&limit=50` },
    { name: 'runs: created in the first hour', path: `/v1/runs?createdBefore=${iso(oldest + HOUR)}&limit=50` },
    { name: 'runs: deep page (cursor at 90 %)', path: `/v1/runs?before=${encodeURIComponent(deep)}&limit=50` },
    { name: 'dead letters by code', path: '/v1/dead-letters?groupBy=code' },
    { name: 'queue activity (15 min)', path: '/v1/queues/activity' },
  ];
}

/** Fills one store, serves it over HTTP and times every scenario. */
async function measureStore(kind: DashboardStore, store: BenchStore, args: DashboardArgs): Promise<StoreResult> {
  const batches = Math.ceil(args.runs / 1_000);
  const clock = createFakeClock(Date.now() - (batches - 1) * 10 * 60_000);
  const filling = store.open(clock);
  await filling.migrate();
  let lastShown = 0;
  const fill = await fillRuns(filling, clock, args.runs, (done) => {
    // Progress on a terminal only; a log gets the final line.
    if (process.stdout.isTTY && (done - lastShown >= 10_000 || done === args.runs)) {
      lastShown = done;
      process.stdout.write(`\r${kind}: filled ${done.toLocaleString('en-US')} runs`);
    }
  });
  await filling.close();
  await store.settle();
  console.log(`${process.stdout.isTTY ? '\r' : ''}${kind}: filled ${fill.runs.toLocaleString('en-US')} runs in ${(fill.elapsedMs / 1_000).toFixed(1)} s`);

  const serving = store.open();
  const kiln = createKiln({ store: serving, artifacts: createFsArtifactStore({ root: mkdtempSync(join(tmpdir(), 'kiln-bench-artifacts-')) }), pipelines: [] });
  const app = buildApp({ kiln, metrics: createMetrics() });
  try {
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const timings: ScenarioTiming[] = [];
    for (const s of scenarios(fill)) timings.push(await timeRequests(base, s.name, s.path, args.requests));
    return { store: kind, fill: { runs: fill.runs, elapsedMs: fill.elapsedMs, method: 'store ports: jobs.submit, jobs.claim, jobs.commit in batches of 1,000' }, scenarios: timings };
  } finally {
    await app.close();
    await serving.close();
  }
}

function printResult(result: StoreResult, requests: number): void {
  const rows = result.scenarios.map((s) => [s.name, String(s.rows), s.p50Ms.toFixed(2), s.p99Ms.toFixed(2), s.maxMs.toFixed(2)]);
  console.log(`\n${result.store}: ${result.fill.runs.toLocaleString('en-US')} finished runs, ${requests} requests per row over HTTP (keep-alive, one at a time)`);
  console.log(formatTextTable(['request', 'rows', 'p50 ms', 'p99 ms', 'max ms'], rows));
  const first = result.scenarios[0];
  if (first) {
    const verdict = first.p50Ms < FIRST_PAGE_TARGET_MS ? 'meets' : 'MISSES';
    console.log(`first page p50 ${first.p50Ms.toFixed(2)} ms, p99 ${first.p99Ms.toFixed(2)} ms: ${verdict} the ${FIRST_PAGE_TARGET_MS} ms target`);
  }
}

/** Runs the suite; true when a first page missed the target. */
export async function runDashboardSuite(args: DashboardArgs): Promise<{ missed: boolean; path: string }> {
  const startedAt = new Date().toISOString();
  const postgresAvailable = Boolean(process.env['KILN_PG_URL']) || findBinDir() !== undefined;
  const stores = args.stores === 'default' ? [DashboardStore.Sqlite, ...(postgresAvailable ? [DashboardStore.Postgres] : [])] : args.stores;
  if (args.stores === 'default' && !postgresAvailable) console.log('postgres skipped: no KILN_PG_URL and no initdb under /usr/lib/postgresql/*/bin');
  console.log(`dashboard: ${args.runs.toLocaleString('en-US')} finished runs per store, stores: ${stores.join(', ')}`);
  const results: StoreResult[] = [];
  for (const kind of stores) {
    const store = kind === DashboardStore.Sqlite ? sqliteBenchStore('dashboard') : await postgresBenchStore('dashboard');
    try {
      results.push(await measureStore(kind, store, args));
    } finally {
      await store.dispose();
    }
    printResult(results.at(-1) as StoreResult, args.requests);
  }
  const machine: MachineInfo = describeMachine();
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = `${RESULTS_DIR}dashboard-${startedAt.replace(/[:.]/g, '-')}.json`;
  writeFileSync(path, `${JSON.stringify({ suite: 'dashboard', startedAt, machine, runs: args.runs, requests: args.requests, targetMs: FIRST_PAGE_TARGET_MS, results }, null, 2)}\n`);
  console.log(`\nwrote ${path}`);
  return { missed: results.some((r) => (r.scenarios[0]?.p50Ms ?? Infinity) >= FIRST_PAGE_TARGET_MS), path };
}
