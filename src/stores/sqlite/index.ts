/**
 * The embedded SQLite store, kiln's default store: one file (WAL mode) that several processes
 * on one machine share — `kiln serve` and any number of `kiln worker` processes.
 */
import type { Clock } from '../../core/clock.ts';
import { systemClock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { createIdGenerator } from '../../core/ids.ts';
import type { Store } from '../../core/ports/store.ts';
import { buildSqliteStore } from './store.ts';
import { openDatabase } from './connection.ts';
import { mapError } from './errors.ts';

/** Options of {@link createSqliteStore}. */
export interface SqliteStoreOptions {
  /** Database file, created if missing (its directory must exist), e.g. `./kiln.db`. */
  path: string;
  /**
   * Source of the store's time. Processes sharing a file must share a clock (the machine's).
   * @default systemClock
   */
  clock?: Clock;
  /** Source of run/job ids and lease tokens. @default createIdGenerator(clock) */
  ids?: IdGenerator;
  /**
   * How long a call waits for another process's write transaction before failing with a
   * retryable `StoreUnavailableError`.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

/** Default of {@link SqliteStoreOptions.busyTimeoutMs}. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) the SQLite file and returns a Store over it. Call `migrate()`
 * before anything else; other methods fail with `SchemaVersionError` until the schema is current.
 * Throws `StoreUnavailableError` when the file cannot be opened.
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? createIdGenerator(clock);
  let db;
  try {
    db = openDatabase(options.path, options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
  } catch (err) {
    throw mapError(err);
  }
  return buildSqliteStore({ db, clock, ids });
}

export { mapError } from './errors.ts';
