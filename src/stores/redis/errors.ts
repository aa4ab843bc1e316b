/**
 * The one place where ioredis errors become kiln errors. Every public method of the Redis store
 * passes what it throws through {@link mapError}, so no driver error escapes the store. Domain
 * answers of a script (`{err: ...}`) are turned into kiln errors by {@link scriptError}.
 */
import {
  AdmissionRefusedError,
  type AdmissionCode,
  ConflictError,
  NotFoundError,
  PipelineError,
  SchemaVersionError,
  StoreUnavailableError,
  UnprocessableError,
  ValidationError,
} from '../../core/errors.ts';
import { NETWORK_ERROR_CODES } from '../shared/network-errors.ts';

/**
 * Server replies after which the same call may succeed later: loading the dataset after a
 * restart, a long script running, writes refused because persistence failed (MISCONF) or memory
 * is full (OOM), a replica that cannot take writes, a cluster slot moving.
 */
const RETRYABLE_REPLIES: readonly RegExp[] = [/^LOADING/, /^BUSY/, /^MISCONF/, /^OOM/, /^READONLY/, /^TRYAGAIN/, /^MASTERDOWN/, /^CLUSTERDOWN/];

/** ioredis messages (no code) of a connection that is gone or a command that waited too long. */
const CONNECTION_MESSAGES: readonly RegExp[] = [
  /^Connection is closed/,
  /^Reached the max retries per request limit/,
  /^Stream isn't writeable/,
  /^Command timed out/,
  /^connect ETIMEDOUT/,
  /^Socket closed unexpectedly/,
];

/** Not retryable, yet "the store cannot be used": bad credentials, ACL refusals. */
const UNUSABLE_REPLIES: readonly RegExp[] = [/^NOAUTH/, /^WRONGPASS/, /^NOPERM/];

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True for an error of a broken or unobtainable connection (as opposed to a failed command). */
export function isConnectionError(err: unknown): boolean {
  const code = codeOf(err);
  if (code !== undefined && NETWORK_ERROR_CODES.has(code)) return true;
  const message = err instanceof Error ? err.message : '';
  return err instanceof Error && (err.name === 'MaxRetriesPerRequestError' || CONNECTION_MESSAGES.some((p) => p.test(message)));
}

/**
 * Translates anything thrown inside the store into a {@link PipelineError}: kiln errors pass
 * through; an unreachable server, a broken connection, a timeout and the retryable replies above
 * become a retryable `StoreUnavailableError`; refused credentials a non-retryable
 * `STORE_UNAVAILABLE`; everything else (a script error is a bug) is `INTERNAL` with the original
 * as `cause`.
 */
export function mapError(err: unknown): PipelineError {
  if (err instanceof PipelineError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (isConnectionError(err) || RETRYABLE_REPLIES.some((p) => p.test(message))) {
    return new StoreUnavailableError(`redis unavailable: ${message}`, { cause: err });
  }
  if (UNUSABLE_REPLIES.some((p) => p.test(message))) {
    return new PipelineError('STORE_UNAVAILABLE', `redis refused the connection: ${message}`, false, { cause: err });
  }
  return new PipelineError('INTERNAL', `redis store error: ${message}`, false, { cause: err });
}

/** A domain answer of a script: `fail(kind, code, message, details)` in lib-keys.lua. */
export interface ScriptFailure {
  kind: 'validation' | 'not_found' | 'conflict' | 'unprocessable' | 'schema' | 'admission';
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** The kiln error a script's domain answer stands for. */
export function scriptError(failure: ScriptFailure): PipelineError {
  const details = Array.isArray(failure.details) ? {} : failure.details;
  switch (failure.kind) {
    case 'validation':
      return new ValidationError(failure.message, { code: failure.code, details });
    case 'not_found':
      return new NotFoundError(String(details.what ?? 'record'), String(details.id ?? ''), { code: failure.code, details });
    case 'conflict':
      return new ConflictError(failure.code, failure.message, { details });
    case 'unprocessable':
      return new UnprocessableError(failure.code, failure.message, { details });
    case 'schema':
      return new SchemaVersionError(failure.message, { details });
    case 'admission': {
      const { retryAfterMs, ...rest } = details;
      return new AdmissionRefusedError(failure.code as AdmissionCode, failure.message, Number(retryAfterMs), { details: rest });
    }
  }
}

/** The error of every call after `close()`. */
export function closedStoreError(): StoreUnavailableError {
  return new StoreUnavailableError('redis store is closed');
}
