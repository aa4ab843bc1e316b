/**
 * The embedded SQLite backend, kiln's default store: one file (WAL mode) that several processes
 * on one machine share — `kiln serve` and any number of `kiln worker` processes.
 */
import type { Clock } from '../../core/clock.ts';
import { systemClock } from '../../core/clock.ts';
import type { IdGenerator } from '../../core/ids.ts';
import { createIdGenerator } from '../../core/ids.ts';
import type { Backend } from '../../core/ports.ts';
import { buildSqliteBackend } from './backend.ts';
import { openDatabase } from './connection.ts';
import { mapError } from './errors.ts';

/** Options of {@link createSqliteBackend}. */
export interface SqliteBackendOptions {
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
   * retryable `BackendUnavailableError`.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

/** Default of {@link SqliteBackendOptions.busyTimeoutMs}. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) the SQLite file and returns a Backend over it. Call `migrate()`
 * before anything else; other methods fail with `SchemaVersionError` until the schema is current.
 * Throws `BackendUnavailableError` when the file cannot be opened.
 */
export function createSqliteBackend(options: SqliteBackendOptions): Backend {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? createIdGenerator(clock);
  let db;
  try {
    db = openDatabase(options.path, options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
  } catch (err) {
    throw mapError(err);
  }
  return buildSqliteBackend({ db, clock, ids });
}

export { mapError } from './errors.ts';
