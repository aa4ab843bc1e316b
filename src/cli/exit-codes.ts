/**
 * The one table from error codes to process exit codes. Scripts branch on these numbers, so they
 * are as stable as the error codes themselves; `docs/errors.md` lists both and a unit test keeps
 * this table, `ERROR_CODES` and the docs in sync.
 */
import type { ErrorCode } from '../core/errors.ts';

/** Exit codes of the `kiln` command. */
export const ExitCode = {
  ok: 0,
  /** Anything not covered below (internal errors, failed stages, corrupt artifacts). */
  failure: 1,
  /** Bad usage, bad input or bad configuration: fix the command or the config, do not retry as is. */
  usage: 2,
  notFound: 3,
  /** The target's state forbids the action (HTTP 409). */
  conflict: 4,
  /** The store cannot be reached, or an admission limit refused (HTTP 429); retrying later may work. */
  unavailable: 5,
} as const;
/** One of {@link ExitCode}'s values. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Exit code of every error code in `ERROR_CODES`. */
export const EXIT_CODES: Readonly<Record<ErrorCode, ExitCode>> = Object.freeze({
  CONFIG_INVALID: ExitCode.usage,
  VALIDATION_FAILED: ExitCode.usage,
  INVALID_JSON: ExitCode.usage,
  INVALID_MULTIPART: ExitCode.usage,
  JSON_FORBIDDEN_KEY: ExitCode.usage,
  PAYLOAD_TOO_LARGE: ExitCode.usage,
  HEADERS_TOO_LARGE: ExitCode.usage,
  REQUEST_TIMEOUT: ExitCode.usage,
  UNSUPPORTED_MEDIA_TYPE: ExitCode.usage,
  UNAUTHENTICATED: ExitCode.usage,
  FORBIDDEN_SCOPE: ExitCode.usage,
  TENANT_MISMATCH: ExitCode.usage,
  UNKNOWN_PIPELINE: ExitCode.notFound,
  UNKNOWN_QUEUE: ExitCode.notFound,
  NOT_FOUND: ExitCode.notFound,
  IDEMPOTENCY_KEY_REUSED: ExitCode.usage,
  QR_CONTENT_TOO_LONG: ExitCode.usage,
  QR_COLORS_UNREADABLE: ExitCode.usage,
  QR_SIZE_TOO_SMALL: ExitCode.usage,
  QR_SIZE_TOO_LARGE: ExitCode.usage,
  ASSET_UNSUPPORTED_FORMAT: ExitCode.usage,
  ASSET_UNREADABLE: ExitCode.usage,
  ASSET_TOO_LARGE: ExitCode.usage,
  ASSET_TOO_MANY_PIXELS: ExitCode.usage,
  ASSET_TOO_COMPLEX: ExitCode.usage,
  ASSET_TYPE_MISMATCH: ExitCode.usage,
  ASSET_IMPORT_FORBIDDEN: ExitCode.usage,
  ASSET_IMPORT_NOT_FOUND: ExitCode.usage,
  TENANT_IN_FLIGHT_LIMIT: ExitCode.unavailable,
  TENANT_RATE_LIMITED: ExitCode.unavailable,
  QUEUE_BACKLOG_FULL: ExitCode.unavailable,
  INVALID_TRANSITION: ExitCode.conflict,
  RUN_COMPENSATED: ExitCode.conflict,
  CANCELLED: ExitCode.conflict,
  SUPERSEDED: ExitCode.conflict,
  WORKER_SHUTDOWN: ExitCode.unavailable,
  LOCK_HELD: ExitCode.conflict,
  LOCK_LOST: ExitCode.conflict,
  LOCK_KEY_UNRESOLVED: ExitCode.usage,
  LEASE_LOST: ExitCode.conflict,
  STORE_UNAVAILABLE: ExitCode.unavailable,
  ARTIFACTS_UNAVAILABLE: ExitCode.unavailable,
  SCHEMA_VERSION_UNSUPPORTED: ExitCode.failure,
  STAGE_FAILED: ExitCode.failure,
  STAGE_TIMEOUT: ExitCode.failure,
  LEASE_EXPIRED: ExitCode.failure,
  ARTIFACT_CORRUPT: ExitCode.failure,
  TOOL_TIMEOUT: ExitCode.failure,
  TOOL_UNAVAILABLE: ExitCode.failure,
  COMMAND_FAILED: ExitCode.failure,
  COMMAND_TEMPLATE_UNRESOLVED: ExitCode.failure,
  INTERNAL: ExitCode.failure,
});

/** Exit code for an error code; codes outside the catalog (e.g. Node's `EADDRINUSE`) exit 1. */
export function exitCodeFor(code: string): ExitCode {
  return Object.hasOwn(EXIT_CODES, code) ? EXIT_CODES[code as ErrorCode] : ExitCode.failure;
}
