/**
 * The error catalog. Every error kiln raises on purpose is a {@link PipelineError} with a stable
 * `SCREAMING_SNAKE` code; `docs/errors.md` lists them all and a unit test keeps the two in sync.
 * HTTP status and CLI exit code are derived from the class (see `ERROR_CODES`).
 */

/** Free-form, JSON-serialisable details attached to an error. */
export type ErrorDetails = Record<string, unknown>;

/** Options shared by every {@link PipelineError}. */
export interface PipelineErrorOptions {
  details?: ErrorDetails;
  cause?: unknown;
}

/** Base class: a stable `code`, whether retrying may help, details and an ES2022 `cause`. */
export class PipelineError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly details: ErrorDetails | undefined;
  /** HTTP status this error maps to when it crosses the API: the catalog's, else the class default. */
  readonly statusCode: number;

  constructor(code: string, message: string, retryable: boolean, options: PipelineErrorOptions & { defaultStatus?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = retryable;
    this.details = options.details;
    this.statusCode = statusOf(code) ?? options.defaultStatus ?? 500;
  }
}

/** The catalogued HTTP status of a code, if it is catalogued. */
function statusOf(code: string): number | undefined {
  return (ERROR_CODES as Record<string, { status: number } | undefined>)[code]?.status;
}

/** One problem found while validating configuration. */
export interface ConfigIssue {
  /** File the value came from, or `env` / `flags`. */
  source: string;
  /** Dotted field path, e.g. `pipelines.demo.sleep.stages.a.timeoutMs`. */
  path: string;
  /** 1-based line in `source`, when known. */
  line?: number;
  /** 1-based column in `source` (with `line`), when known. */
  column?: number;
  message: string;
}

/** Fatal at start-up. Lists every problem at once, each with its file, line and field path. */
export class ConfigError extends PipelineError {
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[], options: PipelineErrorOptions = {}) {
    const lines = issues.map(
      (i) => `  ${i.source}${i.line === undefined ? '' : `:${i.line}`}${i.line === undefined || i.column === undefined ? '' : `:${i.column}`} ${i.path || '(root)'}: ${i.message}`,
    );
    super('CONFIG_INVALID', `invalid configuration (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`, false, {
      ...options,
      details: { issues, ...options.details },
    });
    this.issues = issues;
  }
}

/** Bad input from a caller (HTTP 400). */
export class ValidationError extends PipelineError {
  constructor(message: string, options: PipelineErrorOptions & { code?: string } = {}) {
    super(options.code ?? 'VALIDATION_FAILED', message, false, { ...options, defaultStatus: 400 });
  }
}

/** Input that is well-formed but cannot be processed (HTTP 422). */
export class UnprocessableError extends PipelineError {
  constructor(code: string, message: string, options: PipelineErrorOptions = {}) {
    super(code, message, false, { ...options, defaultStatus: 422 });
  }
}

/**
 * The request carries no usable API token (HTTP 401): none, malformed, unknown, expired or
 * revoked (`details.reason` says which).
 */
export class UnauthenticatedError extends PipelineError {
  constructor(message: string, options: PipelineErrorOptions = {}) {
    super('UNAUTHENTICATED', message, false, { ...options, defaultStatus: 401 });
  }
}

/** The request's token lacks the scope the route needs (HTTP 403); `details.required` names it. */
export class ForbiddenScopeError extends PipelineError {
  constructor(required: string, granted: readonly string[], options: PipelineErrorOptions = {}) {
    super('FORBIDDEN_SCOPE', `this route needs a token with the ${required} scope (or admin); the token has ${granted.join(', ')}`, false, {
      ...options,
      defaultStatus: 403,
      details: { required, granted: [...granted], ...options.details },
    });
  }
}

/** The request names a tenant its (non-admin) token does not act for (HTTP 403); see src/http/tenancy.ts. */
export class TenantMismatchError extends PipelineError {
  constructor(named: string, own: string) {
    super('TENANT_MISMATCH', `this token acts for tenant ${JSON.stringify(own)} and cannot act for tenant ${JSON.stringify(named)} (only an admin token can)`, false, {
      defaultStatus: 403,
      details: { tenant: named, tokenTenant: own },
    });
  }
}

/** The thing asked for does not exist (HTTP 404). */
export class NotFoundError extends PipelineError {
  constructor(what: string, id: string, options: PipelineErrorOptions & { code?: string } = {}) {
    super(options.code ?? 'NOT_FOUND', `${what} ${id} not found`, false, { ...options, defaultStatus: 404, details: { what, id, ...options.details } });
  }
}

/** The request conflicts with the current state (HTTP 409): `INVALID_TRANSITION`, `LOCK_HELD`, ... */
export class ConflictError extends PipelineError {
  constructor(code: string, message: string, options: PipelineErrorOptions = {}) {
    super(code, message, false, { ...options, defaultStatus: 409 });
  }
}

/** The codes of {@link AdmissionRefusedError}: which admission limit refused a submission. */
export const ADMISSION_CODES = ['TENANT_IN_FLIGHT_LIMIT', 'TENANT_RATE_LIMITED', 'QUEUE_BACKLOG_FULL'] as const;
export type AdmissionCode = (typeof ADMISSION_CODES)[number];

/**
 * A submission refused by an admission limit (HTTP 429, retryable): nothing of its batch was
 * stored. `details.retryAfterMs` says when a retry may pass (the HTTP answer's `Retry-After`),
 * `details.limit` the limit, `details.index` the refused request's position in the batch.
 */
export class AdmissionRefusedError extends PipelineError {
  readonly retryAfterMs: number;
  constructor(code: AdmissionCode, message: string, retryAfterMs: number, options: PipelineErrorOptions = {}) {
    super(code, message, true, { ...options, defaultStatus: 429, details: { ...options.details, retryAfterMs } });
    this.retryAfterMs = retryAfterMs;
  }
}

/** The worker no longer holds the job's lease: stop work now, the result will not be committed. */
export class LeaseLostError extends PipelineError {
  constructor(jobId: string, options: PipelineErrorOptions = {}) {
    super('LEASE_LOST', `lease on job ${jobId} was lost`, false, { ...options, details: { jobId, ...options.details } });
  }
}

/** The store cannot be reached right now (HTTP 503, retryable). */
export class StoreUnavailableError extends PipelineError {
  constructor(message: string, options: PipelineErrorOptions = {}) {
    super('STORE_UNAVAILABLE', message, true, options);
  }
}

/**
 * The artifact store cannot write (or read) now: its disk is full, read-only, not permitted or
 * failing (HTTP 503, retryable). `details.errno` names the filesystem condition.
 */
export class ArtifactsUnavailableError extends PipelineError {
  constructor(message: string, options: PipelineErrorOptions = {}) {
    super('ARTIFACTS_UNAVAILABLE', message, true, options);
  }
}

/** The store's schema is newer than this code, or otherwise unusable. Fatal. */
export class SchemaVersionError extends PipelineError {
  constructor(message: string, options: PipelineErrorOptions = {}) {
    super('SCHEMA_VERSION_UNSUPPORTED', message, false, options);
  }
}

/** How a stage failure should be treated. */
export const ErrorClass = {
  /** Retry with backoff until attempts run out, then dead-letter the run (replayable). */
  transient: 'transient',
  /** Retry a few times, then park the run for an operator. */
  intervention: 'intervention',
  /** Never retry: the run ends `failed` at once (after its compensations, if any); not replayable. */
  permanent: 'permanent',
} as const;
export type ErrorClass = (typeof ErrorClass)[keyof typeof ErrorClass];

/** Options for {@link StageFailure} factories. */
export interface StageFailureOptions extends PipelineErrorOptions {
  /** Stable code for this failure; defaults to `STAGE_FAILED`. */
  code?: string;
  /** Earliest retry, overriding the computed backoff (transient only). */
  retryAfterMs?: number;
}

/**
 * Thrown by stage handlers to say how a failure should be treated. Any other throw is treated
 * as `StageFailure.retryable` (Temporal's rule).
 */
export class StageFailure extends PipelineError {
  readonly errorClass: ErrorClass;
  readonly retryAfterMs: number | undefined;

  private constructor(errorClass: ErrorClass, message: string, options: StageFailureOptions) {
    super(options.code ?? 'STAGE_FAILED', message, errorClass !== ErrorClass.permanent, options);
    this.errorClass = errorClass;
    this.retryAfterMs = options.retryAfterMs;
  }

  /** A transient failure: retried with backoff (or after `retryAfterMs`). */
  static retryable(message: string, options: StageFailureOptions = {}): StageFailure {
    return new StageFailure(ErrorClass.transient, message, options);
  }

  /** Needs an operator: retried a few times, then the run is parked. */
  static intervention(message: string, options: StageFailureOptions = {}): StageFailure {
    return new StageFailure(ErrorClass.intervention, message, options);
  }

  /**
   * Will never succeed (bad input): not retried, and the run ends `failed` with this error (after
   * the compensations of its completed stages, if any). Not replayable: submit a new run.
   */
  static permanent(message: string, options: StageFailureOptions = {}): StageFailure {
    return new StageFailure(ErrorClass.permanent, message, options);
  }

  /** Alias of {@link StageFailure.permanent}, the name the design notes use. */
  static nonRetryable(message: string, options: StageFailureOptions = {}): StageFailure {
    return StageFailure.permanent(message, options);
  }
}

/**
 * Every stable code kiln emits, with the HTTP status it maps to. The CLI maps the same codes to
 * exit codes (see `src/cli/exit-codes.ts`). `docs/errors.md` must list exactly these.
 */
export const ERROR_CODES = {
  CONFIG_INVALID: { status: 500, summary: 'kiln.yaml, environment or flags are invalid; start-up stops.' },
  VALIDATION_FAILED: { status: 400, summary: 'The request body, query or parameters do not match the schema, or the HTTP request is malformed.' },
  INVALID_JSON: { status: 400, summary: 'The request body is not valid JSON.' },
  INVALID_MULTIPART: { status: 400, summary: 'The multipart/form-data body is malformed (no boundary, ends early, bad part header) or has no file part.' },
  JSON_FORBIDDEN_KEY: { status: 400, summary: 'The JSON body has a key that could poison a prototype (__proto__, or constructor with a prototype).' },
  PAYLOAD_TOO_LARGE: { status: 413, summary: 'The request body is larger than the limit.' },
  HEADERS_TOO_LARGE: { status: 431, summary: "The request line and headers exceed the HTTP server's limit (a very long URL, say)." },
  REQUEST_TIMEOUT: { status: 408, summary: 'The client did not send the whole request within the receive timeout.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, summary: 'The request Content-Type is not accepted here.' },
  UNAUTHENTICATED: { status: 401, summary: 'The request has no usable API token (none, malformed, unknown, expired or revoked); send Authorization: Bearer <token>.' },
  FORBIDDEN_SCOPE: { status: 403, summary: "The request's API token lacks the scope the route needs (details.required)." },
  TENANT_MISMATCH: { status: 403, summary: 'A token without admin named a tenant other than its own (body tenant, ?tenant=).' },
  UNKNOWN_PIPELINE: { status: 404, summary: 'No pipeline with that name is registered.' },
  UNKNOWN_QUEUE: { status: 404, summary: 'No registered pipeline has a queue with that name.' },
  NOT_FOUND: { status: 404, summary: 'The run, job or queue does not exist (or is another tenant\'s).' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, summary: 'The same Idempotency-Key was used with a different request.' },
  QR_CONTENT_TOO_LONG: { status: 422, summary: 'The QR content has more UTF-8 bytes than the chosen error-correction level holds.' },
  QR_COLORS_UNREADABLE: { status: 422, summary: 'The QR foreground and background colors are the same (or both transparent), so no reader could see the code.' },
  QR_SIZE_TOO_SMALL: { status: 422, summary: 'The requested QR image size gives less than one pixel per module.' },
  QR_SIZE_TOO_LARGE: { status: 422, summary: 'The requested QR scale makes the image larger than the maximum size.' },
  ASSET_UNSUPPORTED_FORMAT: { status: 415, summary: 'The asset bytes are not PNG, JPEG, WebP, GIF, AVIF, TIFF or SVG.' },
  ASSET_UNREADABLE: { status: 422, summary: 'The asset is empty, truncated, corrupt, or an SVG that cannot be accepted safely.' },
  ASSET_TOO_LARGE: { status: 413, summary: 'The asset has more bytes than the configured limit.' },
  ASSET_TOO_MANY_PIXELS: { status: 422, summary: 'The asset header declares more pixels than the configured limit (decompression bomb guard).' },
  ASSET_TOO_COMPLEX: { status: 422, summary: 'The SVG did not rasterize within its render budget (svgRenderBudgetMs); the render was stopped.' },
  ASSET_TYPE_MISMATCH: { status: 422, summary: 'The declared Content-Type contradicts the format sniffed from the bytes.' },
  ASSET_IMPORT_FORBIDDEN: { status: 403, summary: 'An import: source path is empty, absolute, has .. segments or resolves outside every import root.' },
  ASSET_IMPORT_NOT_FOUND: { status: 422, summary: 'An import: source path names no regular file under any import root.' },
  TENANT_IN_FLIGHT_LIMIT: { status: 429, summary: "The tenant already has admission.tenants' maxInFlightRuns runs that have not ended; nothing was queued." },
  TENANT_RATE_LIMITED: { status: 429, summary: "The tenant submits faster than its submitRate (and submitBurst) allows; nothing was queued." },
  QUEUE_BACKLOG_FULL: { status: 429, summary: "The queue of the run's first stage already holds maxBacklog ready jobs; nothing was queued." },
  INVALID_TRANSITION: { status: 409, summary: 'The run or job is not in a state that allows this action.' },
  RUN_COMPENSATED: { status: 409, summary: 'The run was rolled back; it cannot be replayed, submit a new run.' },
  CANCELLED: { status: 409, summary: 'The run was cancelled (by an operator, or its queue was drained).' },
  SUPERSEDED: { status: 409, summary: 'A newer version of the subject was submitted; this run can no longer commit.' },
  WORKER_SHUTDOWN: { status: 503, summary: 'The worker shut down; the job was handed back unworked.' },
  LOCK_HELD: { status: 409, summary: 'Another owner holds the lock.' },
  LOCK_LOST: { status: 409, summary: "A stage's lock expired or was taken over while its handler ran; the attempt failed (transient)." },
  LOCK_KEY_UNRESOLVED: { status: 422, summary: "A stage's lock key template names a value the run's input does not have (or not as a string, number or boolean)." },
  LEASE_LOST: { status: 409, summary: 'The worker no longer holds the job lease; its result was discarded.' },
  STORE_UNAVAILABLE: { status: 503, summary: 'The store cannot be reached; retry later.' },
  ARTIFACTS_UNAVAILABLE: { status: 503, summary: 'The artifact store cannot write now (disk full, read-only, not permitted or failing); retry later.' },
  SCHEMA_VERSION_UNSUPPORTED: { status: 500, summary: 'The store schema is newer than this kiln.' },
  STAGE_FAILED: { status: 500, summary: 'A stage handler failed (default code of StageFailure and plain throws).' },
  STAGE_TIMEOUT: { status: 500, summary: 'A stage handler ran past its timeoutMs and was abandoned.' },
  LEASE_EXPIRED: { status: 500, summary: 'A job lease expired on every attempt (worker crashed); attempts are exhausted.' },
  ARTIFACT_CORRUPT: { status: 500, summary: 'An artifact on disk does not match its recorded size or checksum.' },
  TOOL_TIMEOUT: { status: 500, summary: 'An external tool ran past its timeout; its whole process group was killed. Retryable.' },
  TOOL_UNAVAILABLE: { status: 500, summary: 'An external tool could not be started (not installed, not executable).' },
  COMMAND_FAILED: { status: 500, summary: "A command stage's command exited non-zero or died by a signal; the message ends with its stderr." },
  COMMAND_TEMPLATE_UNRESOLVED: { status: 500, summary: 'A command stage template named an input field, output or artifact this run does not have.' },
  INTERNAL: { status: 500, summary: 'An unexpected server error.' },
} as const satisfies Record<string, { status: number; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
