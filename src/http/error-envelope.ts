/**
 * Every error leaves the API in fastify's native envelope `{statusCode, code, error, message}`
 * (+ `details`), with one of kiln's stable codes (`ERROR_CODES`), never a stack trace.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, PipelineError, type ErrorCode, type ErrorDetails } from '../core/errors.ts';

/** The body of every error response. */
export interface ErrorEnvelope {
  statusCode: number;
  code: string;
  /** The HTTP reason phrase of `statusCode`. */
  error: string;
  message: string;
  details?: ErrorDetails;
}

/** Seconds a client should wait before retrying after a 503, unless the error says. */
const DEFAULT_RETRY_AFTER_S = 1;

/** fastify's own errors that have a kiln code of their own. */
const FASTIFY_CODES: Readonly<Record<string, { statusCode: number; code: string }>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { statusCode: 413, code: 'PAYLOAD_TOO_LARGE' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  FST_ERR_NOT_FOUND: { statusCode: 404, code: 'NOT_FOUND' },
};

function envelope(statusCode: number, code: string, message: string, details?: ErrorDetails): ErrorEnvelope {
  const body: ErrorEnvelope = { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message };
  if (details !== undefined) body.details = details;
  return body;
}

/** One schema violation, named by where it is (`body.input.delayMs`, `querystring.limit`). */
interface FieldIssue {
  field: string;
  message: string;
}

/** Turns validation errors (see `typebox-validator.ts`) into field-named issues. */
function fieldIssues(err: FastifyError): FieldIssue[] {
  const context = err.validationContext ?? 'request';
  return (err.validation ?? []).map((v) => {
    // JSON pointer segments, unescaped (RFC 6901: ~1 is "/", ~0 is "~").
    const segments = v.instancePath
      .split('/')
      .filter((s) => s !== '')
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
    return { field: [context, ...segments].join('.'), message: v.message ?? 'is invalid' };
  });
}

/**
 * The catalog (`ERROR_CODES`) decides the status of a catalogued code, whichever error class
 * carried it, so the API always matches docs/errors.md; other codes keep their class's status.
 */
function statusOf(err: PipelineError): number {
  return Object.hasOwn(ERROR_CODES, err.code) ? ERROR_CODES[err.code as ErrorCode].status : err.statusCode;
}

function isFastifyError(err: unknown): err is FastifyError {
  return err instanceof Error && typeof (err as Partial<FastifyError>).code === 'string';
}

/**
 * Maps any thrown value to an envelope. `internal` is true when the error is unexpected (500
 * INTERNAL) and must be logged; its message is then replaced so nothing internal leaks.
 */
export function toErrorEnvelope(err: unknown): { body: ErrorEnvelope; internal: boolean } {
  if (err instanceof PipelineError) {
    const statusCode = statusOf(err);
    // A 503 (STORE_UNAVAILABLE, ARTIFACTS_UNAVAILABLE, ...) is a known, retryable condition, not a bug.
    return { body: envelope(statusCode, err.code, err.message, err.details), internal: statusCode >= 500 && statusCode !== 503 };
  }
  if (isFastifyError(err)) {
    if (err.validation) {
      const issues = fieldIssues(err);
      const message = issues.map((i) => `${i.field} ${i.message}`).join('; ');
      return { body: envelope(400, 'VALIDATION_FAILED', message, { issues }), internal: false };
    }
    const known = FASTIFY_CODES[err.code];
    if (known) return { body: envelope(known.statusCode, known.code, err.message), internal: false };
    // Other client errors fastify raises (bad Content-Length, a path parameter over the router's
    // limit, ...) are malformed requests; as for every code, the catalogue decides the status.
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code: ErrorCode = status === 404 ? 'NOT_FOUND' : 'VALIDATION_FAILED';
      return { body: envelope(ERROR_CODES[code].status, code, err.message), internal: false };
    }
  }
  return { body: envelope(500, 'INTERNAL', 'internal server error'), internal: true };
}

function retryAfterSeconds(body: ErrorEnvelope): number {
  const ms = body.details?.retryAfterMs;
  return typeof ms === 'number' && ms > 0 ? Math.ceil(ms / 1000) : DEFAULT_RETRY_AFTER_S;
}

function handleError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { body, internal } = toErrorEnvelope(err);
  if (internal) request.log.error({ err }, 'request failed');
  // Every 503 and 429 says when to retry.
  // RFC 6750: a 401 names the scheme; a presented token that was refused is an invalid_token.
  if (body.statusCode === 401) {
    const reason = body.details?.reason;
    void reply.header('www-authenticate', reason === 'missing' || reason === 'no_tokens' ? 'Bearer realm="kiln"' : 'Bearer realm="kiln", error="invalid_token"');
  }
  if (body.statusCode === 503) {
    request.log.warn({ err }, body.code === 'STORE_UNAVAILABLE' ? 'store unavailable' : 'unavailable');
    void reply.header('retry-after', String(retryAfterSeconds(body)));
  }
  // An admission refusal (429) says when a retry may pass; it is the client's pace, not ours: no log.
  if (body.statusCode === 429) void reply.header('retry-after', String(retryAfterSeconds(body)));
  return reply.status(body.statusCode).send(body);
}

/**
 * fastify's `frameworkErrors` option: the errors its router raises before any route or hook runs
 * (a path with a malformed percent-encoding, `FST_ERR_BAD_URL`; a path parameter longer than
 * `maxParamLength`, `FST_ERR_MAX_PARAM_LENGTH`), which it would otherwise answer itself with its
 * own codes, go through the same envelope as every other error.
 */
export function handleFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  handleError(err, request, reply);
}

/** The envelope of a request Node's HTTP parser refused (`clientError`), by Node's error code. */
export function clientErrorEnvelope(nodeCode: string | undefined): ErrorEnvelope {
  const code: ErrorCode = nodeCode === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : nodeCode === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : 'VALIDATION_FAILED';
  const messages: Record<string, string> = {
    REQUEST_TIMEOUT: 'the request was not received in full within the receive timeout',
    HEADERS_TOO_LARGE: 'the request line and headers are larger than the server accepts (shorten the URL or the headers)',
  };
  return envelope(ERROR_CODES[code].status, code, messages[code] ?? `the HTTP request is malformed (${nodeCode ?? 'parse error'})`);
}

/**
 * fastify's `clientErrorHandler` option: a request Node cannot parse (headers over its size limit,
 * a broken request line, a client too slow to send its request) never reaches fastify's routing,
 * and fastify's own answer has no code. This one answers kiln's envelope, then closes the
 * connection as Node does.
 */
export function handleClientError(err: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const body = clientErrorEnvelope(err.code);
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${body.statusCode} ${body.error}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
  }
  socket.destroy(err);
}

/** Installs the error handler and the not-found handler on the root instance. */
export function installErrorEnvelope(app: FastifyInstance): void {
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(envelope(404, 'NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`)),
  );
}
