/**
 * Opens the SQLite file with the settings every process sharing it must agree on: WAL (readers
 * never block the writer), `synchronous = NORMAL` (durable across process crashes, fsync only at
 * checkpoints), foreign keys on, and a busy timeout so a process waits for the write lock
 * instead of failing at once; plus per-connection tuning (see {@link CONNECTION_PRAGMAS}).
 */
import Database from 'better-sqlite3';

/** A better-sqlite3 connection. */
export type SqliteDatabase = Database.Database;

/** Blocks the thread briefly; better-sqlite3 is synchronous, so a retry has to wait in place. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Switches to WAL. Two processes opening a new file at once may both try the switch, and it
 * needs a brief exclusive lock that SQLite does not always wait for, so retry until the busy
 * timeout is spent.
 */
function enableWal(db: SqliteDatabase, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      if (db.pragma('journal_mode', { simple: true }) === 'wal') return;
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      sleepSync(5);
    }
  }
}

/**
 * Per-connection tuning, none of which weakens durability:
 * - `cache_size`: 16 MiB of page cache (the default 2 MiB re-reads hot index pages once the
 *   store holds a few thousand runs);
 * - `temp_store`: sorts of operator queries (listJobs, queueStats) stay in memory;
 * - `wal_autocheckpoint`: checkpoint every 10,000 WAL pages (~40 MiB) instead of 1,000. A
 *   checkpoint copies each page changed since the last one back into the database and fsyncs;
 *   the hot pages (queue heads, the newest runs) change in nearly every transaction, so a longer
 *   interval copies each of them once per checkpoint instead of ten times (~7% of a transition);
 * - `journal_size_limit`: the WAL file is truncated back to 64 MiB after a checkpoint if a long
 *   reader ever let it grow past that.
 */
export const CONNECTION_PRAGMAS: readonly string[] = [
  'cache_size = -16384',
  'temp_store = MEMORY',
  'wal_autocheckpoint = 10000',
  'journal_size_limit = 67108864',
];

/** Opens (creating if needed) the database file at `path` and applies the connection pragmas. */
export function openDatabase(path: string, busyTimeoutMs: number): SqliteDatabase {
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    enableWal(db, busyTimeoutMs);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    for (const pragma of CONNECTION_PRAGMAS) db.pragma(pragma);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * A statement prepared on first use of each value its text depends on (claim limits, stage
 * counts, run statuses: a few values each), then kept: the hot path never re-parses SQL.
 */
export function preparedPerValue<K, S>(prepare: (value: K) => S): (value: K) => S {
  const cache = new Map<K, S>();
  return (value) => {
    let statement = cache.get(value);
    if (statement === undefined) cache.set(value, (statement = prepare(value)));
    return statement;
  };
}
