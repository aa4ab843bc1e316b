/**
 * Opens the SQLite file with the settings every process sharing it must agree on: WAL (readers
 * never block the writer), `synchronous = NORMAL` (durable across process crashes, fsync only at
 * checkpoints), foreign keys on, and a busy timeout so a process waits for the write lock
 * instead of failing at once.
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

/** Opens (creating if needed) the database file at `path` and applies the connection pragmas. */
export function openDatabase(path: string, busyTimeoutMs: number): SqliteDatabase {
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    enableWal(db, busyTimeoutMs);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
