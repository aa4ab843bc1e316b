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
 * With `--store postgres` the same on a private PostgreSQL cluster (test/support/postgres-cluster.ts):
 * the schema's total relation size before, after the pass, after VACUUM and after VACUUM FULL,
 * and each batch's statement time (it holds row locks on the runs it deletes only; readers and
 * other writers are not blocked).
 *
 *   node --import tsx bench/retention/prune-pass.ts [--runs 100000] [--batch 100] [--store sqlite|postgres]
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { FakeClock } from '../../src/core/clock.ts';
import type { PruneCounts, RetentionPolicy } from '../../src/core/ports/retention.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { startPostgres } from '../../test/support/postgres-cluster.ts';
import { createFakeClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { fillRuns } from '../dashboard/fill-runs.ts';

const DAY = 86_400_000;
const { values } = parseArgs({ options: { runs: { type: 'string', default: '100000' }, batch: { type: 'string', default: '100' }, store: { type: 'string', default: 'sqlite' } } });
const runs = Number(values.runs);
const batch = Number(values.batch);

const mib = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MiB`;
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/** Prunes until a batch is not full; each batch's wall time and the totals. */
async function prunePass(store: Store, policy: RetentionPolicy): Promise<{ held: number[]; total: PruneCounts; passMs: number }> {
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
  held.sort((a, b) => a - b);
  return { held, total, passMs: performance.now() - passStart };
}

/** Fills `store`, moves its clock past every period and returns the policy. */
async function fillAndAge(store: Store, clock: FakeClock): Promise<RetentionPolicy> {
  await store.migrate();
  const fill = await fillRuns(store, clock, runs, () => {});
  console.log(`filled ${fill.runs} runs in ${(fill.elapsedMs / 1000).toFixed(1)} s`);
  await clock.advance(31 * DAY);
  return { succeededMs: 7 * DAY, failedMs: 30 * DAY, cancelledMs: 30 * DAY, requestsMs: 30 * DAY };
}

if (values.store === 'postgres') {
  const server = await startPostgres();
  const schema = `kiln_bench_retention_${process.pid}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  const schemaSize = async (): Promise<number> => {
    const { rows } = await admin.query<{ bytes: string }>(
      'SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = $2',
      [schema, 'r'],
    );
    return Number(rows[0]?.bytes ?? 0);
  };
  try {
    const clock = createFakeClock(Date.now() - 40 * DAY);
    const store = createPostgresStore({ connectionString: server.url, schema, clock });
    const policy = await fillAndAge(store, clock);
    const tables = ['runs', 'stage_records', 'jobs', 'ledger', 'failed_attempts', 'request_records'].map((t) => `"${schema}".${t}`).join(', ');
    await admin.query(`VACUUM ANALYZE ${tables}`);
    const sizeBefore = await schemaSize();
    const { held, total, passMs } = await prunePass(store, policy);
    await store.close();
    const sizeAfter = await schemaSize();
    await admin.query(`VACUUM ${tables}`);
    const sizeVacuumed = await schemaSize();
    await admin.query(`VACUUM FULL ${tables}`);
    const sizeFull = await schemaSize();
    console.log(`pruned ${JSON.stringify(total)} in ${held.length} batches of ${batch}, ${(passMs / 1000).toFixed(1)} s`);
    console.log(`statement per batch: p50 ${pct(held, 0.5).toFixed(1)} ms, p99 ${pct(held, 0.99).toFixed(1)} ms, max ${(held.at(-1) ?? 0).toFixed(1)} ms`);
    console.log(`size: before ${mib(sizeBefore)}; after the pass ${mib(sizeAfter)}; after VACUUM ${mib(sizeVacuumed)} (space reusable, not returned); after VACUUM FULL ${mib(sizeFull)}`);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
    await server.stop();
  }
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'kiln-retention-bench-'));
const path = join(dir, 'kiln.db');
const size = (): number => [path, `${path}-wal`].filter(existsSync).reduce((n, f) => n + statSync(f).size, 0);

try {
  const clock = createFakeClock(Date.now() - 40 * DAY);
  const store = createSqliteStore({ path, clock, ids: createIdGenerator(clock) });
  const policy = await fillAndAge(store, clock);
  // The WAL folded into the file first, so "before" is the data, not the fill's WAL.
  const side = new Database(path);
  side.pragma('wal_checkpoint(TRUNCATE)');
  side.close();
  const sizeBefore = size();

  const t0 = performance.now();
  const expected = await store.retention.count(policy);
  console.log(`dry run (count): ${JSON.stringify(expected)} in ${(performance.now() - t0).toFixed(0)} ms`);

  const { held, total, passMs } = await prunePass(store, policy);
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

  console.log(`pruned ${JSON.stringify(total)} in ${held.length} batches of ${batch}, ${(passMs / 1000).toFixed(1)} s; ${left} runs left (subjects' current versions)`);
  console.log(`write lock per batch: p50 ${pct(held, 0.5).toFixed(1)} ms, p99 ${pct(held, 0.99).toFixed(1)} ms, max ${(held.at(-1) ?? 0).toFixed(1)} ms`);
  console.log(`size: before ${mib(sizeBefore)}; after the pass ${mib(sizeAfter)} (${freePages} free pages = ${mib(freePages * pageSize)} reusable); after checkpoint ${mib(sizeCheckpointed)}; after VACUUM ${mib(sizeVacuumed)} (VACUUM took ${(vacuumMs / 1000).toFixed(1)} s)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
