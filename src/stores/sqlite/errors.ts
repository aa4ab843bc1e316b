/**
 * The one place where better-sqlite3 errors become kiln errors. Every public method of the SQLite
 * store passes what it throws through {@link mapError}, so no driver error escapes the store.
 */
import { StoreUnavailableError, PipelineError } from '../../core/errors.ts';

/** SQLite result codes (primary or extended) that mean "try again later". */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'SQLITE_BUSY',
  'SQLITE_BUSY_RECOVERY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_TIMEOUT',
  'SQLITE_LOCKED',
  'SQLITE_LOCKED_SHAREDCACHE',
  'SQLITE_LOCKED_VTAB',
]);

/** Codes that mean the file cannot be used at all right now (missing dir, disk, permissions). */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set(['SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_READONLY']);

/** The SQLite result code of a driver error (`SqliteError.code`), if it carries one. */
function sqliteCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/** Primary code of an extended one: `SQLITE_IOERR_WRITE` -> `SQLITE_IOERR`. */
function primaryCode(code: string): string {
  const parts = code.split('_');
  return parts.length > 2 ? `${parts[0]}_${parts[1]}` : code;
}

/**
 * Translates anything thrown inside the store into a {@link PipelineError}:
 * kiln errors pass through; `SQLITE_BUSY`/`SQLITE_LOCKED` (the write lock stayed taken past the
 * busy timeout) and an unusable file (`SQLITE_CANTOPEN`, `SQLITE_IOERR`, ...) become a retryable
 * `StoreUnavailableError`; everything else (constraint violations included: methods check what
 * they expect before writing) is wrapped as `INTERNAL` with the original as `cause`.
 */
export function mapError(err: unknown): PipelineError {
  if (err instanceof PipelineError) return err;
  const code = sqliteCode(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code !== undefined) {
    if (RETRYABLE_CODES.has(code) || RETRYABLE_CODES.has(primaryCode(code))) {
      return new StoreUnavailableError(`sqlite is busy: ${message}`, { cause: err, details: { sqliteCode: code } });
    }
    if (UNAVAILABLE_CODES.has(primaryCode(code))) {
      return new StoreUnavailableError(`sqlite file unavailable: ${message}`, { cause: err, details: { sqliteCode: code } });
    }
  }
  return new PipelineError('INTERNAL', `sqlite store error: ${message}`, false, {
    cause: err,
    details: code === undefined ? undefined : { sqliteCode: code },
  });
}
