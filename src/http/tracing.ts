/**
 * A server span per request (`<METHOD> <route>`, a child of the client's W3C `traceparent` when it
 * sends a valid one), active while the route's handler runs, so `kiln.submit` and everything else
 * the handler does are its children. Every response carries `traceparent` (the server span's, so
 * a client can find its request's trace), and `request.traceparent` holds the same value for
 * routes to pass to `kiln.submit` (it is what a run stores when no SDK is registered: the client's
 * trace, or a fresh one). Request log lines carry `trace_id`.
 */
import { context, ROOT_CONTEXT, SpanKind, trace, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
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

function startServerSpan(request: FastifyRequest, reply: FastifyReply): void {
  const client = parseTraceparent(single(request.headers.traceparent));
  // No SDK: no span, and no context to run the handler in; the client's trace, or a fresh one.
  if (!tracingEnabled()) return carryTrace(request, reply, client ?? mintSpanContext(undefined));
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

/** Names the request's trace: `request.traceparent`, the response header and the log lines. */
function carryTrace(request: FastifyRequest, reply: FastifyReply, spanContext: SpanContext): void {
  request.traceparent = formatTraceparent(spanContext);
  void reply.header('traceparent', request.traceparent);
  // The "request completed" line (build-app.ts) and the handlers' lines must carry the trace id.
  // Bound to the logger fastify made for the request (pino's setBindings, ~1 µs) rather than
  // in a child of it (a pino child of a child costs ~7.5 µs); a logger without setBindings (a
  // non-pino Logger, or none) gets the child.
  const log = request.log as FastifyRequest['log'] & { setBindings?: (bindings: Record<string, unknown>) => void };
  if (typeof log.setBindings === 'function') log.setBindings({ trace_id: spanContext.traceId });
  else request.log = reply.log = log.child({ trace_id: spanContext.traceId });
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
