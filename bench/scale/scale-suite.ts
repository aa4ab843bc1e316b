/**
 * `npm run bench -- scale`: does kiln stay as fast as the store grows? For SQLite and PostgreSQL,
 * fills the store with finished runs through its own ports (bench/dashboard/fill-runs.ts) up to
 * each size in turn (default 0, 100,000, 1,000,000) and measures there: 5-stage chains/s (the
 * engine bench's kiln run on that store), p50/p99 of `GET /v1/runs` (first page and a status
 * filter) over real HTTP, and the store's size on disk. Then one retention pass on the largest
 * store (periods of half the filled time span, so about half the runs expire), the size after it
 * and after compaction, and chains/s again. Then, on PostgreSQL, chains/s with 1, 2 and 4 worker
 * processes (bench/scale/worker-curve.ts). Writes bench/results/scale-<timestamp>.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createFakeClock, type FakeClock } from '../../src/core/clock.ts';
import { createKiln } from '../../src/engine/create-kiln.ts';
import { pruneExpired } from '../../src/engine/retention.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { createMetrics } from '../../src/observe/metrics.ts';
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from '../dashboard/bench-stores.ts';
import { DashboardStore } from '../dashboard/dashboard-args.ts';
import { BATCH, BATCH_STEP_MS, fillRuns } from '../dashboard/fill-runs.ts';
import { timeRequests, type ScenarioTiming } from '../dashboard/measure-http.ts';
import { describeMachine } from '../engine/machine-info.ts';
import { runKilnBench, warmupRunsFor } from '../engine/kiln-bench.ts';
import { SubmitMode } from '../engine/submit-heads.ts';
import { formatTextTable } from '../engine/text-table.ts';
import type { ScaleArgs } from './scale-args.ts';
import { measureWorkerCurve, type CurvePoint } from './worker-curve.ts';
import { lowerMedianBy } from '../engine/median.ts';

/** Issue 13: chains/s on the largest store must be at least this share of chains/s on the empty one. */
export const SCALE_TARGET = 0.8;
const CONCURRENCY = 10;
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const MB = 1024 * 1024;

/** What one store measured at one size. */
export interface SizePoint {
  finishedRuns: number;
  /** The median of `chainRounds`. */
  chainsPerSec: number;
  chainRounds: number[];
  runsFirstPage: ScenarioTiming;
  runsByStatus: ScenarioTiming;
  sizeMb: number;
  fillSeconds: number;
}

/** The retention pass on the largest store and what followed it. */
export interface RetentionStep {
  /** Each period of the policy (succeeded, failed, cancelled, requests). */
  periodHours: number;
  runsBefore: number;
  runsAfter: number;
  seconds: number;
  mbBefore: number;
  mbAfterPrune: number;
  mbAfterCompact: number;
  /** How the freed space went back to the file system. */
  compaction: string;
  /** The median round at the largest size, before the pass. */
  chainsPerSecBefore: number;
  /** The median of `chainRoundsAfterPrune`: right after the pass, before any compaction. */
  chainsPerSecAfterPrune: number;
  chainRoundsAfterPrune: number[];
  /** The median of `chainRoundsAfter`: after the compaction. */
  chainsPerSecAfter: number;
  chainRoundsAfter: number[];
  runsListP99After: number;
}

interface StoreScale {
  store: DashboardStore;
  points: SizePoint[];
  retention?: RetentionStep;
  workerCurve?: CurvePoint[];
}

/**
 * One retention pass over the whole store with every period at half of the fill's time span, in
 * batches of 500; chains measured right after it (the next run a user sees: the reaper prunes,
 * autovacuum follows, nothing is compacted); then the store compacted (the size it gives back)
 * and chains measured again (a compaction rewrites every table and index, so the first rounds
 * after it read them back from the file system).
 */
async function retentionStep(bench: BenchStore, kind: DashboardStore, largest: number, before: SizePoint, args: ScaleArgs): Promise<RetentionStep> {
  const periodMs = (Math.ceil(largest / BATCH) * BATCH_STEP_MS) / 2;
  const runsBefore = await bench.countRuns();
  const store = bench.open();
  const t0 = performance.now();
  try {
    await pruneExpired(store, { succeededMs: periodMs, failedMs: periodMs, cancelledMs: periodMs, requestsMs: periodMs, batchSize: 500 });
  } finally {
    await store.close();
  }
  const seconds = (performance.now() - t0) / 1_000;
  await bench.settle();
  const mbAfterPrune = await sizeMb(bench);
  const afterPrune = await chainsPerSecRounds(bench, kind, args);
  await bench.compact();
  // Planner statistics of the compacted tables, as autovacuum would have them.
  await bench.settle();
  const after = await chainsPerSecRounds(bench, kind, args);
  const step: RetentionStep = {
    periodHours: Math.round((periodMs / 3_600_000) * 10) / 10,
    runsBefore,
    runsAfter: await bench.countRuns(),
    seconds: Math.round(seconds),
    mbBefore: before.sizeMb,
    mbAfterPrune,
    mbAfterCompact: await sizeMb(bench),
    compaction: kind === DashboardStore.Sqlite ? 'VACUUM' : 'VACUUM FULL of the schema',
    chainsPerSecBefore: before.chainsPerSec,
    chainsPerSecAfterPrune: afterPrune.median,
    chainRoundsAfterPrune: afterPrune.rounds,
    chainsPerSecAfter: after.median,
    chainRoundsAfter: after.rounds,
    runsListP99After: (await timeRunsList(bench, args.requests)).first.p99Ms,
  };
  console.log(
    `${kind}, retention pass (${step.periodHours} h periods): ${step.runsBefore.toLocaleString('en-US')} -> ${step.runsAfter.toLocaleString('en-US')} runs in ${step.seconds} s; ${step.mbBefore} MB -> ${step.mbAfterPrune} MB after the prune, ${step.mbAfterCompact} MB after ${step.compaction}; chains/s ${step.chainsPerSecBefore} before, ${step.chainsPerSecAfterPrune} after the prune (median of ${step.chainRoundsAfterPrune.join(', ')}), ${step.chainsPerSecAfter} after ${step.compaction} (median of ${step.chainRoundsAfter.join(', ')})`,
  );
  return step;
}

async function sizeMb(bench: BenchStore): Promise<number> {
  return Math.round(((await bench.sizeBytes()) / MB) * 10) / 10;
}

/**
 * `args.repeat` rounds of 5-stage chains on the store as it is now, and their median: a single
 * round on this shared machine swings ±25%, more than the differences the suite reports.
 */
async function chainsPerSecRounds(bench: BenchStore, kind: DashboardStore, args: ScaleArgs): Promise<{ median: number; rounds: number[] }> {
  const rounds: number[] = [];
  for (let i = 0; i < args.repeat; i++) rounds.push(await chainsPerSec(bench, kind, args.chains));
  return { median: lowerMedianBy(rounds, (perSec) => perSec) ?? 0, rounds };
}

/** 5-stage chains/s of kiln on the store as it is now (a fresh handle on the real clock). */
async function chainsPerSec(bench: BenchStore, kind: DashboardStore, chains: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-scale-artifacts-'));
  try {
    const result = await runKilnBench({
      system: `kiln-${kind}`,
      store: bench.open(),
      artifacts: createFsArtifactStore({ root: dir }),
      runs: chains,
      concurrency: CONCURRENCY,
      warmupRuns: warmupRunsFor(chains),
      submit: SubmitMode.Bulk,
    });
    return result.runsPerSec;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** p50/p99 of the runs list, first page and filtered by status, over real HTTP. */
async function timeRunsList(bench: BenchStore, requests: number): Promise<{ first: ScenarioTiming; byStatus: ScenarioTiming }> {
  const store = bench.open();
  const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-scale-http-'));
  const app = buildApp({ kiln: createKiln({ store, artifacts: createFsArtifactStore({ root: dir }), pipelines: [] }), metrics: createMetrics() });
  try {
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const first = await timeRequests(base, 'runs: first page', '/v1/runs?limit=50', requests);
    const byStatus = await timeRequests(base, 'runs: status=failed', '/v1/runs?status=failed&limit=50', requests);
    return { first, byStatus };
  } finally {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Fills `bench` from `from` to `to` finished runs on `clock`; seconds taken. */
async function fillTo(bench: BenchStore, clock: FakeClock, kind: DashboardStore, from: number, to: number): Promise<number> {
  if (to <= from) return 0;
  const store = bench.open(clock);
  try {
    await clock.advance(BATCH_STEP_MS);
    const fill = await fillRuns(store, clock, to - from, (done) => {
      if (process.stdout.isTTY && done % 50_000 === 0) process.stdout.write(`\r${kind}: filled ${(from + done).toLocaleString('en-US')} runs`);
    });
    if (process.stdout.isTTY) process.stdout.write('\r');
    return fill.elapsedMs / 1_000;
  } finally {
    await store.close();
    await bench.settle();
  }
}

async function measureStore(kind: DashboardStore, args: ScaleArgs): Promise<StoreScale> {
  const bench = kind === DashboardStore.Sqlite ? sqliteBenchStore('scale') : await postgresBenchStore('scale');
  try {
    const largest = args.sizes.at(-1) ?? 0;
    // The fill's clock ends about now after the largest size: its runs span the days before.
    const clock = createFakeClock(Date.now() - (Math.ceil(largest / BATCH) + 1) * BATCH_STEP_MS);
    const migrating = bench.open(clock);
    await migrating.migrate();
    await migrating.close();
    const points: SizePoint[] = [];
    let filled = 0;
    for (const size of args.sizes) {
      const fillSeconds = await fillTo(bench, clock, kind, filled, size);
      filled = size;
      const { median: perSec, rounds } = await chainsPerSecRounds(bench, kind, args);
      const reads = await timeRunsList(bench, args.requests);
      const mb = await sizeMb(bench);
      points.push({ finishedRuns: size, chainsPerSec: perSec, chainRounds: rounds, runsFirstPage: reads.first, runsByStatus: reads.byStatus, sizeMb: mb, fillSeconds: Math.round(fillSeconds) });
      console.log(`${kind}, ${size.toLocaleString('en-US')} finished runs: ${perSec} chains/s (median of ${rounds.join(', ')}), GET /v1/runs p99 ${reads.first.p99Ms.toFixed(2)} ms (status filter ${reads.byStatus.p99Ms.toFixed(2)} ms), ${mb} MB on disk (filled in ${Math.round(fillSeconds)} s)`);
    }
    const last = points.at(-1);
    const retention = largest > 0 && last ? await retentionStep(bench, kind, largest, last, args) : undefined;
    const workerCurve = kind === DashboardStore.Postgres && args.workers.length > 0 && bench.url ? await measureWorkerCurve(bench.url, args.workers, args.chains, CONCURRENCY) : undefined;
    return { store: kind, points, ...(retention ? { retention } : {}), ...(workerCurve ? { workerCurve } : {}) };
  } finally {
    await bench.dispose();
  }
}

function printStore(result: StoreScale): void {
  const empty = result.points[0]?.chainsPerSec;
  const rows = result.points.map((p) => [
    p.finishedRuns.toLocaleString('en-US'),
    p.chainsPerSec.toFixed(1),
    empty ? `${(p.chainsPerSec / empty).toFixed(2)}x` : '',
    p.runsFirstPage.p50Ms.toFixed(2),
    p.runsFirstPage.p99Ms.toFixed(2),
    p.runsByStatus.p99Ms.toFixed(2),
    p.sizeMb.toFixed(1),
  ]);
  console.log(`\n${result.store}: 5-stage chains (bulk submit, concurrency ${CONCURRENCY}) and GET /v1/runs as the store grows`);
  console.log(formatTextTable(['finished runs', 'chains/s', 'vs empty', 'list p50 ms', 'list p99 ms', 'failed p99 ms', 'MB on disk'], rows));
  const last = result.points.at(-1);
  if (empty && last && result.points.length > 1) {
    const ratio = last.chainsPerSec / empty;
    console.log(`chains/s at ${last.finishedRuns.toLocaleString('en-US')} runs / empty: ${ratio.toFixed(2)}x (target >= ${SCALE_TARGET}x: ${ratio >= SCALE_TARGET ? 'met' : 'NOT met'})`);
  }
  const r = result.retention;
  if (r) {
    console.log(`\n${result.store}: one retention pass (every period ${r.periodHours} h, batches of 500)`);
    console.log(
      formatTextTable(
        ['runs before', 'runs after', 'pass s', 'MB before', 'MB after prune', `MB after ${r.compaction}`, 'chains/s before', 'after prune', `after ${r.compaction}`, 'list p99 ms after'],
        [
          [
            String(r.runsBefore),
            String(r.runsAfter),
            String(r.seconds),
            r.mbBefore.toFixed(1),
            r.mbAfterPrune.toFixed(1),
            r.mbAfterCompact.toFixed(1),
            r.chainsPerSecBefore.toFixed(1),
            r.chainsPerSecAfterPrune.toFixed(1),
            r.chainsPerSecAfter.toFixed(1),
            r.runsListP99After.toFixed(2),
          ],
        ],
      ),
    );
    const ratio = (after: number): string => `${(after / r.chainsPerSecBefore).toFixed(2)}x`;
    console.log(`chains/s after the pass / before it: ${ratio(r.chainsPerSecAfterPrune)}; after ${r.compaction} / before: ${ratio(r.chainsPerSecAfter)} (medians of ${r.chainRoundsAfter.length} rounds each)`);
  }
  if (result.workerCurve) {
    console.log(`\n${result.store}: worker processes on one database`);
    console.log(
      formatTextTable(
        ['workers', 'chains/s', "workers' CPU (cores)", 'server CPU (cores)', 'commits/chain', 'limit'],
        result.workerCurve.map((p) => [String(p.workers), p.chainsPerSec.toFixed(1), p.workerCpuBusy.toFixed(2), p.serverCpuBusy.toFixed(2), p.commitsPerChain.toFixed(2), p.limit]),
      ),
    );
  }
}

/** Runs the suite; true when a store missed the scale target. */
export async function runScaleSuite(args: ScaleArgs): Promise<{ missed: boolean; path: string }> {
  const startedAt = new Date().toISOString();
  console.log(`scale: sizes ${args.sizes.map((s) => s.toLocaleString('en-US')).join(', ')} finished runs; ${args.chains} chains per point; stores: ${args.stores.join(', ')}`);
  const results: StoreScale[] = [];
  for (const kind of args.stores) {
    const result = await measureStore(kind, args);
    printStore(result);
    results.push(result);
  }
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = `${RESULTS_DIR}scale-${startedAt.replace(/[:.]/g, '-')}.json`;
  writeFileSync(path, `${JSON.stringify({ suite: 'scale', startedAt, machine: describeMachine(), args, results }, null, 2)}\n`);
  console.log(`\nwrote ${path}`);
  const missed = results.some((r) => {
    const empty = r.points[0]?.chainsPerSec ?? 0;
    const last = r.points.at(-1)?.chainsPerSec ?? 0;
    return r.points.length > 1 && last < SCALE_TARGET * empty;
  });
  return { missed, path };
}
