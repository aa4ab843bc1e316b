/**
 * A server span per request (`<METHOD> <route>`, a child of the client's W3C `traceparent` when it
 * sends a valid one), active while the route's handler runs, so `kiln.submit` and everything else
 * the handler does are its children. Every response carries `traceparent` (the server span's, so
 * a client can find its request's trace), and `request.traceparent` holds the same value for
 * routes to pass to `kiln.submit` (it is what a run stores when no SDK is registered: the client's
 * trace, or a fresh one). Request log lines carry `trace_id`.
 */
import { context, ROOT_CONTEXT, SpanKind, trace, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RawRequestDefaultExpression, RouteHandlerMethod } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';
import { formatTraceparent, kilnTracer, mintSpanContext, parseTraceparent, recordFailure, tracingEnabled } from '../engine/tracing.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * W3C `traceparent` of this request (its server span; without an OpenTelemetry SDK the
     * client's, or a fresh trace): pass it to `kiln.submit` (`SubmitOptions.traceparent`).
     */
    traceparent: string;
    /** The request's server span and the context its handler runs in. */
    kilnTrace: { span: Span; context: Context; error?: unknown } | null;
  }
}

/** One header value (a repeated header is not a valid traceparent). */
function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The trace {@link requestChildLogger} decided for a raw request (no SDK), kept on the request
 * itself: a WeakMap keyed by requests costs its garbage collector's ephemeron work per request.
 */
const TRACED_AT_LOGGER = Symbol('kiln.tracedAtLogger');
type RawWithTrace = RawRequestDefaultExpression & { [TRACED_AT_LOGGER]?: SpanContext };

/**
 * fastify's `childLoggerFactory`: each request's logger, made once. Without an SDK a request's
 * trace (the client's, or a fresh one) follows from its headers alone, so `trace_id` joins
 * fastify's own bindings in the same child: in pino a child of a child costs ~7 µs, one child
 * ~1 µs. With an SDK the server span names the trace, and {@link startServerSpan} binds it.
 */
export function requestChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions, raw: RawRequestDefaultExpression): FastifyBaseLogger {
  if (tracingEnabled()) return logger.child(bindings, options);
  const spanContext = parseTraceparent(single(raw.headers.traceparent)) ?? mintSpanContext(undefined);
  (raw as RawWithTrace)[TRACED_AT_LOGGER] = spanContext;
  return logger.child({ ...bindings, trace_id: spanContext.traceId }, options);
}

function startServerSpan(request: FastifyRequest, reply: FastifyReply): void {
  if (!tracingEnabled()) {
    // No SDK: no span, and no context to run the handler in; the client's trace, or a fresh one,
    // already bound to the request's logger when fastify made it.
    const known = (request.raw as RawWithTrace)[TRACED_AT_LOGGER];
    if (known !== undefined) return nameTrace(request, reply, known);
    return carryTrace(request, reply, parseTraceparent(single(request.headers.traceparent)) ?? mintSpanContext(undefined));
  }
  const client = parseTraceparent(single(request.headers.traceparent));
  const parent = client ? trace.setSpanContext(ROOT_CONTEXT, client) : ROOT_CONTEXT;
  const route = request.routeOptions.url;
  const span = kilnTracer().startSpan(route ? `${request.method} ${route}` : request.method, { kind: SpanKind.SERVER }, parent);
  if (span.isRecording()) {
    span.setAttributes({
      'http.request.method': request.method,
      'url.path': request.url.split('?', 1)[0] ?? request.url,
      'url.scheme': request.protocol,
      'client.address': request.ip,
      ...(route ? { 'http.route': route } : {}),
    });
  }
  request.kilnTrace = { span, context: trace.setSpan(parent, span) };
  carryTrace(request, reply, span.spanContext());
}

/** Names the request's trace: `request.traceparent` and the response header. */
function nameTrace(request: FastifyRequest, reply: FastifyReply, spanContext: SpanContext): void {
  request.traceparent = formatTraceparent(spanContext);
  void reply.header('traceparent', request.traceparent);
}

/** {@link nameTrace}, and the log lines: the trace id is bound to the request's logger. */
function carryTrace(request: FastifyRequest, reply: FastifyReply, spanContext: SpanContext): void {
  nameTrace(request, reply, spanContext);
  // The "request completed" line (build-app.ts) and the handlers' lines must carry the trace id.
  request.log = reply.log = request.log.child({ trace_id: spanContext.traceId });
}

function endServerSpan(request: FastifyRequest, statusCode: number | undefined): void {
  const traced = request.kilnTrace;
  if (!traced) return;
  request.kilnTrace = null;
  if (statusCode !== undefined && traced.span.isRecording()) {
    traced.span.setAttribute('http.response.status_code', statusCode);
    // A 4xx is the client's mistake: the server span stays unset (OpenTelemetry's HTTP conventions).
    if (statusCode >= 500) recordFailure(traced.span, traced.error ?? new Error(`HTTP ${statusCode}`));
  }
  traced.span.end();
}

/**
 * Installs the request spans and runs every route registered after this call (install it first)
 * inside its request's context.
 */
export function installRequestTracing(app: FastifyInstance): void {
  app.decorateRequest('traceparent', '');
  app.decorateRequest('kilnTrace', null);
  app.addHook('onRequest', async (request, reply) => startServerSpan(request, reply));
  app.addHook('onError', async (request, _reply, error) => {
    if (request.kilnTrace) request.kilnTrace.error = error;
  });
  app.addHook('onResponse', async (request, reply) => endServerSpan(request, reply.statusCode));
  app.addHook('onRequestAbort', async (request) => endServerSpan(request, undefined));
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function tracedHandler(this: FastifyInstance, request, reply) {
      const active = request.kilnTrace?.context;
      return active ? context.with(active, () => handler.call(this, request, reply)) : handler.call(this, request, reply);
    } as RouteHandlerMethod;
  });
}
