/**
 * Counts the transactions a benchmark phase cost the server, from `pg_stat_database`
 * (`xact_commit`: every committed transaction, read-only ones included) and from the
 * transaction-id counter (write transactions and subtransactions that were assigned an xid).
 *
 * `xact_commit` is not live: each store keeps its counts locally and flushes them at most
 * once a second while busy, or up to 10 s later while idle (PostgreSQL 15 pgstat). A store
 * always flushes when it exits, so a reading is only exact once every client connection of the
 * phase has closed. {@link readTxCounters} therefore waits for the database to have no other
 * client stores before reading; phases must close their pools before the second reading.
 */
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';

/** One reading of the server's transaction counters. */
export interface TxCounters {
  /** `pg_stat_database.xact_commit` of the connected database. */
  xactCommit: number;
  /** The next transaction id to be assigned (cluster-wide). */
  nextXid: number;
  /** Rows inserted, updated and deleted in the database's tables (`pg_stat_user_tables`), per table. */
  rowWrites: Record<string, RowWrites>;
}

/** Row writes of one table (`n_tup_ins`, `n_tup_upd`, `n_tup_del`), or of a phase. */
export interface RowWrites {
  inserted: number;
  updated: number;
  deleted: number;
}

/** How long other connections may take to close before a reading gives up waiting. */
const IDLE_TIMEOUT_MS = 10_000;
const IDLE_POLL_MS = 20;
/**
 * A store leaves pg_stat_activity in an exit callback that runs just before the one that
 * flushes its statistics, so a short pause after the last one disappears lets that flush land.
 */
const FLUSH_GRACE_MS = 100;

const OTHER_CLIENTS_SQL = `select count(*)::int as n from pg_stat_activity
  where datname = current_database() and backend_type = 'client store' and pid <> pg_backend_pid()`;
const COUNTERS_SQL = `select xact_commit::float8 as xact_commit, pg_snapshot_xmax(pg_current_snapshot())::text as next_xid
  from pg_stat_database where datname = current_database()`;
// Flushed like xact_commit (see above), so read under the same wait.
const ROW_WRITES_SQL = `select relname as table, n_tup_ins::float8 as inserted, n_tup_upd::float8 as updated, n_tup_del::float8 as deleted
  from pg_stat_user_tables where n_tup_ins + n_tup_upd + n_tup_del > 0`;

async function waitForNoOtherClients(client: pg.Client): Promise<void> {
  const deadline = performance.now() + IDLE_TIMEOUT_MS;
  for (;;) {
    const { rows } = await client.query<{ n: number }>(OTHER_CLIENTS_SQL);
    if ((rows[0]?.n ?? 0) === 0) return;
    if (performance.now() > deadline) throw new Error(`${rows[0]?.n} other connections still open after ${IDLE_TIMEOUT_MS} ms`);
    await delay(IDLE_POLL_MS);
  }
}

/**
 * Waits until no other client is connected to the database, then reads the counters. The
 * reading's own connection commits a few transactions too (its polls, counted when it exits,
 * i.e. in the next reading); {@link measureReadingOverhead} measures that so it can be subtracted.
 */
export async function readTxCounters(connectionString: string): Promise<TxCounters> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await waitForNoOtherClients(client);
    await delay(FLUSH_GRACE_MS);
    const { rows } = await client.query<{ xact_commit: number; next_xid: string }>(COUNTERS_SQL);
    const row = rows[0];
    if (!row) throw new Error('pg_stat_database has no row for the current database');
    const writes = await client.query<RowWrites & { table: string }>(ROW_WRITES_SQL);
    const rowWrites: Record<string, RowWrites> = {};
    for (const { table, ...counts } of writes.rows) rowWrites[table] = sumRowWrites([rowWrites[table], counts]);
    return { xactCommit: row.xact_commit, nextXid: Number(row.next_xid), rowWrites };
  } finally {
    await client.end();
  }
}

/** The sum of some row-write counts (absent ones count zero). */
function sumRowWrites(counts: readonly (RowWrites | undefined)[]): RowWrites {
  const sum = { inserted: 0, updated: 0, deleted: 0 };
  for (const c of counts) {
    sum.inserted += c?.inserted ?? 0;
    sum.updated += c?.updated ?? 0;
    sum.deleted += c?.deleted ?? 0;
  }
  return sum;
}

/** Transactions and row writes between two readings. */
export interface TxDelta {
  xactCommits: number;
  writeXids: number;
  /** Row writes per table that changed (tables of every schema, by name). */
  rowWritesByTable: Record<string, RowWrites>;
  rowWrites: RowWrites;
}

/** The difference `after - before`. */
export function txDelta(before: TxCounters, after: TxCounters): TxDelta {
  const rowWritesByTable: Record<string, RowWrites> = {};
  for (const [table, a] of Object.entries(after.rowWrites)) {
    const b = before.rowWrites[table];
    const d = { inserted: a.inserted - (b?.inserted ?? 0), updated: a.updated - (b?.updated ?? 0), deleted: a.deleted - (b?.deleted ?? 0) };
    if (d.inserted + d.updated + d.deleted > 0) rowWritesByTable[table] = d;
  }
  return {
    xactCommits: after.xactCommit - before.xactCommit,
    writeXids: after.nextXid - before.nextXid,
    rowWritesByTable,
    rowWrites: sumRowWrites(Object.values(rowWritesByTable)),
  };
}

/**
 * Commits one reading adds to the next: two back-to-back readings with nothing in between.
 * Run it when the database is otherwise idle.
 */
export async function measureReadingOverhead(connectionString: string): Promise<number> {
  const first = await readTxCounters(connectionString);
  const second = await readTxCounters(connectionString);
  return second.xactCommit - first.xactCommit;
}
