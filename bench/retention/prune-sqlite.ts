/**
 * Retention on a large SQLite store: fills a fresh file with N finished runs through the store's
 * ports (bench/dashboard/fill-runs.ts: 90 % succeeded, 4 % failed, 3 % dead-lettered, 3 %
 * cancelled; one run in ten holds a subject's only version, so retention keeps it), moves the
 * clock past every period, prunes in batches, and prints: the file size (database + WAL) before,
 * after the pass, after a WAL checkpoint and after VACUUM; the free pages the pass left; and how
 * long each batch held the write lock (a batch is one synchronous BEGIN IMMEDIATE transaction, so
 * its wall time is the time it held the lock), as p50 / p99 / max. Also times one claim + commit
 * of a fresh run before and after, to see the hot path did not get slower.
 *
 *   node --import tsx bench/retention/prune-sqlite.ts [--runs 100000] [--batch 500]
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createFakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { fillRuns } from '../dashboard/fill-runs.ts';

const DAY = 86_400_000;
const { values } = parseArgs({ options: { runs: { type: 'string', default: '100000' }, batch: { type: 'string', default: '500' } } });
const runs = Number(values.runs);
const batch = Number(values.batch);

const dir = mkdtempSync(join(tmpdir(), 'kiln-retention-bench-'));
const path = join(dir, 'kiln.db');
const mib = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MiB`;
const size = (): number => [path, `${path}-wal`].filter(existsSync).reduce((n, f) => n + statSync(f).size, 0);
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

try {
  const clock = createFakeClock(Date.now() - 40 * DAY);
  const store = createSqliteStore({ path, clock, ids: createIdGenerator(clock) });
  await store.migrate();
  const fill = await fillRuns(store, clock, runs, () => {});
  console.log(`filled ${fill.runs} runs in ${(fill.elapsedMs / 1000).toFixed(1)} s`);
  // The WAL folded into the file first, so "before" is the data, not the fill's WAL.
  const side = new Database(path);
  side.pragma('wal_checkpoint(TRUNCATE)');
  side.close();
  const sizeBefore = size();

  await clock.advance(31 * DAY);
  const policy = { succeededMs: 7 * DAY, failedMs: 30 * DAY, cancelledMs: 30 * DAY, requestsMs: 30 * DAY };
  const t0 = performance.now();
  const expected = await store.retention.count(policy);
  console.log(`dry run (count): ${JSON.stringify(expected)} in ${(performance.now() - t0).toFixed(0)} ms`);

  const held: number[] = [];
  const total = { runs: 0, stageRecords: 0, ledgerEntries: 0, jobs: 0, attempts: 0, requests: 0 };
  const passStart = performance.now();
  for (;;) {
    const start = performance.now();
    const counts = await store.retention.prune(policy, batch);
    held.push(performance.now() - start);
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += counts[k];
    if (counts.runs < batch && counts.requests < batch) break;
  }
  const passMs = performance.now() - passStart;
  await store.close();
  const sizeAfter = size();

  const db = new Database(path);
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const freePages = db.pragma('freelist_count', { simple: true }) as number;
  const left = (db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n;
  db.pragma('wal_checkpoint(TRUNCATE)');
  const sizeCheckpointed = size();
  const vacuumStart = performance.now();
  db.exec('VACUUM');
  const vacuumMs = performance.now() - vacuumStart;
  db.pragma('wal_checkpoint(TRUNCATE)');
  const sizeVacuumed = size();
  db.close();

  held.sort((a, b) => a - b);
  console.log(`pruned ${JSON.stringify(total)} in ${held.length} batches of ${batch}, ${(passMs / 1000).toFixed(1)} s; ${left} runs left (subjects' current versions)`);
  console.log(`write lock per batch: p50 ${pct(held, 0.5).toFixed(1)} ms, p99 ${pct(held, 0.99).toFixed(1)} ms, max ${(held.at(-1) ?? 0).toFixed(1)} ms`);
  console.log(`size: before ${mib(sizeBefore)}; after the pass ${mib(sizeAfter)} (${freePages} free pages = ${mib(freePages * pageSize)} reusable); after checkpoint ${mib(sizeCheckpointed)}; after VACUUM ${mib(sizeVacuumed)} (VACUUM took ${(vacuumMs / 1000).toFixed(1)} s)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
