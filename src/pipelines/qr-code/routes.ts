/**
 * The QR HTTP surface, mounted by `src/http` when the `qr-code` pipeline is registered:
 *   POST /v1/qr            JSON options -> 200 image, or 202 {request_id, content_hash, status_url}
 *   GET  /v1/qr?content=…  the same from query parameters (for `<img src>`)
 *   GET  /v1/qr/:hash      the image (ETag = hash, immutable, 304), 202 while building, 404 unknown
 *   GET  /v1/requests/:id  the status of a request (request ids are run ids)
 * `wait` (ms, body field or query parameter) bounds how long a request waits for its render; the
 * request deadline (`http.requestTimeoutMs`) is extended by it, so a documented wait is never a 503.
 * Renders are shared by content; with API tokens a tenant sees only the hashes (and requests) it
 * asked for, anything else is the 404 of an unknown one (see qr-service.ts).
 */
import { access, actingTenant, viewerTenant, TokenScope, extendRequestDeadline, idempotencyKeyOf, ifNoneMatch, parseQueryInteger, ValidationError, type PipelineReply, type PipelineRequest, type PipelineRoutes, type Run } from '../../index.ts';
import { QR_PIPELINE } from './pipeline.ts';
import { createQrService, QR_WAIT_DEFAULT_MS, QR_WAIT_MAX_MS, type QrAnswer, type QrCaller } from './qr-service.ts';

/** Who asks (see QrCaller): nobody in particular on an open server. */
function callerOf(request: PipelineRequest): QrCaller | undefined {
  if (!request.auth) return undefined;
  return { tenant: actingTenant(request) as string, restricted: viewerTenant(request) !== null };
}

const HASH = /^[0-9a-f]{64}$/;
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Splits `wait` off the request's fields; the rest are the QR options. */
function takeWait(fields: unknown, query: Record<string, unknown>): { raw: unknown; waitMs: number } {
  let raw = fields;
  let wait: unknown = query['wait'];
  if (typeof fields === 'object' && fields !== null && !Array.isArray(fields) && 'wait' in fields) {
    const { wait: bodyWait, ...rest } = fields as Record<string, unknown>;
    raw = rest;
    wait = bodyWait;
  }
  if (wait === undefined) return { raw, waitMs: QR_WAIT_DEFAULT_MS };
  const waitMs = typeof wait === 'string' ? parseQueryInteger(wait) : wait;
  if (typeof waitMs !== 'number' || !Number.isInteger(waitMs) || waitMs < 0 || waitMs > QR_WAIT_MAX_MS) {
    throw new ValidationError(`wait must be an integer from 0 to ${QR_WAIT_MAX_MS} (ms)`, { details: { issues: [{ path: '/wait', message: 'out of range' }] } });
  }
  return { raw, waitMs };
}

function pendingBody(hash: string, run: Run) {
  return {
    request_id: run.id,
    content_hash: hash,
    status: run.status,
    status_url: `/v1/requests/${run.id}`,
    result_url: `/v1/qr/${hash}`,
  };
}

function send(request: PipelineRequest, reply: PipelineReply, answer: QrAnswer): PipelineReply {
  if (answer.kind === 'pending') {
    return reply.status(202).header('location', `/v1/requests/${answer.run.id}`).send(pendingBody(answer.hash, answer.run));
  }
  void reply.header('etag', `"${answer.hash}"`).header('cache-control', IMMUTABLE).header('content-location', `/v1/qr/${answer.hash}`);
  if (ifNoneMatch(request, `"${answer.hash}"`)) return reply.status(304).send();
  return reply.status(200).type(answer.image.mediaType).send(Buffer.from(answer.image.bytes.buffer, answer.image.bytes.byteOffset, answer.image.bytes.byteLength));
}

/** The QR routes. */
export const qrRoutes: PipelineRoutes = {
  pipeline: QR_PIPELINE,
  plugin: async (app, { kiln }) => {
    const qr = createQrService(kiln);

    app.post('/v1/qr', { config: access(TokenScope.submit) }, async (request, reply) => {
      const { raw, waitMs } = takeWait(request.body, request.query as Record<string, unknown>);
      extendRequestDeadline(request, waitMs);
      const key = idempotencyKeyOf(request.headers);
      return send(request, reply, await qr.request({ raw, source: 'json', waitMs, traceparent: request.traceparent, caller: callerOf(request), ...(key === undefined ? {} : { idempotencyKey: key }) }));
    });

    app.get('/v1/qr', { config: access(TokenScope.submit) }, async (request, reply) => {
      const { raw, waitMs } = takeWait(request.query, {});
      extendRequestDeadline(request, waitMs);
      return send(request, reply, await qr.request({ raw, source: 'query', waitMs, traceparent: request.traceparent, caller: callerOf(request) }));
    });

    app.get<{ Params: { hash: string } }>('/v1/qr/:hash', { config: access(TokenScope.read) }, async (request, reply) => {
      const hash = request.params.hash.toLowerCase();
      if (!HASH.test(hash)) throw new ValidationError('hash must be 64 hexadecimal characters (a content hash)');
      return send(request, reply, await qr.byHash(hash, request.traceparent, callerOf(request)));
    });

    app.get<{ Params: { id: string } }>('/v1/requests/:id', { config: access(TokenScope.read) }, async (request) => {
      const { run, hash } = await qr.requestRun(request.params.id, callerOf(request));
      const { result_url: resultUrl, ...status } = pendingBody(hash, run);
      return { ...status, ...(run.status === 'succeeded' ? { result_url: resultUrl } : {}), ...(run.error ? { error: run.error } : {}) };
    });
  },
};
