/**
 * The stores the large-store benchmarks (dashboard, scale) fill and measure: a SQLite file in a
 * temp dir, or a schema of its own on a private PostgreSQL cluster (or `KILN_PG_URL`). Each can be
 * opened several times (on the fill's fake clock, then on the real one) and reports its size.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { FakeClock } from '../../src/core/clock.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { createSqliteStore } from '../../src/stores/sqlite/index.ts';
import { startPostgres } from '../../test/support/postgres-cluster.ts';

/** A store to fill (on a fake clock) and reopen (on the real one). */
export interface BenchStore {
  open(clock?: FakeClock): Store;
  /**
   * After a bulk change: planner statistics, as autovacuum would have them, and the change
   * checkpointed, so that the next measurement does not pay for writing out the bulk load.
   */
  settle(): Promise<void>;
  /** Bytes the store takes on disk (SQLite: the database file and its WAL; PostgreSQL: the schema's relations). */
  sizeBytes(): Promise<number>;
  /** Runs stored. */
  countRuns(): Promise<number>;
  /** Gives freed space back to the file system: SQLite `VACUUM` (and a WAL truncate), PostgreSQL `VACUUM FULL` of the schema's tables. */
  compact(): Promise<void>;
  /** Connection URL when the store is on PostgreSQL. */
  readonly url?: string;
  /** Schema name when the store is on PostgreSQL. */
  readonly schema?: string;
  dispose(): Promise<void>;
}

/** PostgreSQL's SQLSTATE for a missing privilege. */
const INSUFFICIENT_PRIVILEGE = '42501';

function withDatabase<T>(path: string, body: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return body(db);
  } finally {
    db.close();
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function sqliteBenchStore(prefix: string): BenchStore {
  const dir = mkdtempSync(join(tmpdir(), `kiln-bench-${prefix}-`));
  const path = join(dir, 'kiln.db');
  return {
    open: (clock) => createSqliteStore({ path, ...(clock ? { clock } : {}) }),
    // The bulk load's WAL goes into the database file now, not during the next measurement.
    settle: async () => withDatabase(path, (db) => void db.pragma('wal_checkpoint(TRUNCATE)')),
    sizeBytes: async () => fileSize(path) + fileSize(`${path}-wal`),
    countRuns: async () => withDatabase(path, (db) => (db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n),
    compact: async () =>
      withDatabase(path, (db) => {
        db.exec('VACUUM');
        db.pragma('wal_checkpoint(TRUNCATE)');
      }),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

export async function postgresBenchStore(prefix: string): Promise<BenchStore> {
  const server = await startPostgres();
  const schema = `kiln_bench_${prefix}_${process.pid}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  return {
    url: server.url,
    schema,
    open: (clock) => createPostgresStore({ connectionString: server.url, schema, ...(clock ? { clock } : {}) }),
    // A bulk load leaves no statistics and no visibility map until autovacuum comes by, and
    // dirty buffers a checkpoint would write out during the next measurement (CHECKPOINT needs
    // a superuser or pg_checkpoint: on a server where we are neither, that write is left to it).
    // Every table of the schema: one left out (request records, retired jobs) would be vacuumed
    // by autovacuum during the next measurement instead.
    settle: async () => {
      const { rows } = await admin.query<{ t: string }>('select tablename as t from pg_tables where schemaname = $1', [schema]);
      await admin.query(`VACUUM ANALYZE ${rows.map(({ t }) => `"${schema}"."${t}"`).join(', ')}`);
      await admin.query('CHECKPOINT').catch((err: unknown) => {
        if ((err as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw err;
      });
    },
    sizeBytes: async () => {
      const { rows } = await admin.query<{ bytes: string }>(
        `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::text as bytes from pg_class c
           join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind in ('r', 'm')`,
        [schema],
      );
      return Number(rows[0]?.bytes ?? 0);
    },
    countRuns: async () => Number((await admin.query<{ n: string }>(`select count(*)::text as n from "${schema}".runs`)).rows[0]?.n ?? 0),
    compact: async () => {
      const { rows } = await admin.query<{ t: string }>('select tablename as t from pg_tables where schemaname = $1', [schema]);
      for (const { t } of rows) await admin.query(`VACUUM FULL "${schema}"."${t}"`);
    },
    dispose: async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await admin.end();
      await server.stop();
    },
  };
}
