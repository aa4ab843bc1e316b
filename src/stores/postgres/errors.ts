/**
 * The one place where `pg` errors become kiln errors. Every public method of the PostgreSQL
 * store passes what it throws through {@link mapError}, so no driver error escapes the store.
 */
import { StoreUnavailableError, PipelineError, SchemaVersionError } from '../../core/errors.ts';
import { NETWORK_ERROR_CODES } from '../shared/network-errors.ts';

/**
 * SQLSTATEs after which the same call may succeed later: the server is going away or not yet
 * accepting connections, it is out of connection slots, or the transaction lost a race
 * (serialization failure, deadlock) and was rolled back whole.
 */
const RETRYABLE_SQLSTATES: ReadonlySet<string> = new Set([
  '57P01', // admin_shutdown (pg_ctl stop/restart, pg_terminate_backend)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, recovering)
  '53300', // too_many_connections
  '53400', // configuration_limit_exceeded
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '25P03', // idle_in_transaction_session_timeout
]);

/** SQLSTATE classes that mean the same: connection exceptions, insufficient resources. */
const RETRYABLE_CLASSES: ReadonlySet<string> = new Set(['08', '53']);

/**
 * Messages `pg` and `pg-pool` throw without a code when a connection ends, cannot be made in
 * time, or the client can no longer be used after one did.
 */
const CONNECTION_MESSAGES: readonly RegExp[] = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^Query read timeout/,
  /^Connection ended unexpectedly/,
];

/** SQLSTATEs that mean the schema is missing or not migrated (dropped under a running store). */
const SCHEMA_MISSING_SQLSTATES: ReadonlySet<string> = new Set(['42P01', '3F000', '42883']);

/** Not retryable, yet "the store cannot be used": bad credentials, missing database. */
const UNUSABLE_CLASSES: ReadonlySet<string> = new Set(['28']);
const UNUSABLE_SQLSTATES: ReadonlySet<string> = new Set(['3D000']);

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True for an error of a broken or unobtainable connection (as opposed to a failed statement). */
export function isConnectionError(err: unknown): boolean {
  const code = codeOf(err);
  if (code !== undefined && (NETWORK_ERROR_CODES.has(code) || RETRYABLE_CLASSES.has(code.slice(0, 2)) || code.startsWith('57P'))) {
    return true;
  }
  const message = err instanceof Error ? err.message : '';
  return CONNECTION_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * Translates anything thrown inside the store into a {@link PipelineError}: kiln errors pass
 * through; an unreachable server, a broken connection and a transaction that lost a race become a
 * retryable `StoreUnavailableError`; a missing schema object becomes `SchemaVersionError`
 * ("call migrate()"); bad credentials or a missing database a non-retryable `STORE_UNAVAILABLE`;
 * everything else (constraint violations included: methods check what they expect before
 * writing) is wrapped as `INTERNAL` with the original as `cause` and its SQLSTATE in `details`.
 */
export function mapError(err: unknown): PipelineError {
  if (err instanceof PipelineError) return err;
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  const details = code === undefined ? undefined : { code };
  if ((code !== undefined && RETRYABLE_SQLSTATES.has(code)) || isConnectionError(err)) {
    return new StoreUnavailableError(`postgres unavailable: ${message}`, { cause: err, details });
  }
  if (code !== undefined && SCHEMA_MISSING_SQLSTATES.has(code)) {
    return new SchemaVersionError(`postgres schema is missing objects (call migrate() first): ${message}`, { cause: err, details });
  }
  if (code !== undefined && (UNUSABLE_SQLSTATES.has(code) || UNUSABLE_CLASSES.has(code.slice(0, 2)))) {
    return new PipelineError('STORE_UNAVAILABLE', `postgres refused the connection: ${message}`, false, {
      cause: err,
      details,
    });
  }
  const constraint = (err as { constraint?: unknown } | null)?.constraint;
  return new PipelineError('INTERNAL', `postgres store error: ${message}`, false, {
    cause: err,
    details: code === undefined ? undefined : { code, ...(typeof constraint === 'string' ? { constraint } : {}) },
  });
}
