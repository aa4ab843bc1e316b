/**
 * Tracing over `@opentelemetry/api` only: the engine creates spans on the tracer `kiln` and the
 * process that embeds it brings the SDK (the CLI does, when an OTLP endpoint is configured).
 * Without an SDK every call here is the API's no-op, yet trace context still flows: a run stores
 * the W3C `traceparent` it was submitted under (a fresh random one when there was none), and each
 * attempt of its jobs, in whatever process claims them, starts as a child of it, so logs carry
 * the same `trace_id` either way.
 */
import {
  context,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  isValidSpanId,
  isValidTraceId,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { randomHex, type IdGenerator } from '../core/ids.ts';
import type { Run } from '../core/model.ts';

/** Name of the tracer every kiln span is created on. */
export const TRACER_NAME = 'kiln';

let cached: { provider: TracerProvider; tracer: Tracer } | undefined;
/** What a `ProxyTracerProvider` delegates to while no SDK is registered (the API's no-op provider). */
let noopDelegate: TracerProvider | undefined;
/** The span handed to `withSpan` callbacks while no SDK is registered. */
let nonRecording: Span | undefined;

/**
 * True once an OpenTelemetry SDK is registered. Until then every span would be the API's no-op,
 * so kiln skips them altogether: the job path then costs nothing for tracing but this check.
 */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  if (!(provider instanceof ProxyTracerProvider)) return true;
  noopDelegate ??= new ProxyTracerProvider().getDelegate();
  return provider.getDelegate() !== noopDelegate;
}

/**
 * The `kiln` tracer of the global provider in force. Looked up again when the provider changes
 * (an SDK registered or shut down later), which a tracer kept from import time would miss.
 */
export function kilnTracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (cached?.provider !== provider) cached = { provider, tracer: provider.getTracer(TRACER_NAME) };
  return cached.tracer;
}

/** `version-traceid-spanid-flags`; versions above 00 may append fields (W3C Trace Context, 3.2.4). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The span context a W3C `traceparent` header names (as a remote parent), or undefined when the
 * header is absent or invalid (an all-zero id, version `ff`, junk after a version 00 header): the
 * spec says to start a new trace then, never to fail the request.
 */
export function parseTraceparent(header: string | undefined): SpanContext | undefined {
  if (header === undefined) return undefined;
  const match = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!match) return undefined;
  const [, version, traceId = '', spanId = '', flags = '00', rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (!isValidTraceId(traceId) || !isValidSpanId(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true };
}

/** The W3C `traceparent` of a span context (version 00). */
export function formatTraceparent(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-0${spanContext.traceFlags & TraceFlags.SAMPLED ? '1' : '0'}`;
}

/**
 * A sampled remote span context with random ids (or the given trace id): the trace of work that
 * arrived without one, so its logs and later spans still share an id.
 */
export function mintSpanContext(ids: IdGenerator | undefined, traceId?: string): SpanContext {
  const spanId = randomId(ids).slice(0, 16);
  return {
    traceId: traceId !== undefined && isValidTraceId(traceId) ? traceId : randomId(ids),
    // 16 random hex digits are all zero (invalid) with probability 2^-64; a constant is fine then.
    spanId: isValidSpanId(spanId) ? spanId : '0000000000000001',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  };
}

/** 32 random hex digits: the id generator's token, or the shared random pool's when it has none (or not hex). */
function randomId(ids: IdGenerator | undefined): string {
  const token = ids?.token();
  return token !== undefined && isValidTraceId(token) ? token : randomHex(16);
}

/**
 * The context a run's attempts continue: its stored `traceParent`, else its trace id under an
 * unknown parent (runs stored before kiln kept the parent), else none (a new trace).
 */
export function runTraceContext(run: Pick<Run, 'traceId' | 'traceParent'>, ids: IdGenerator): Context {
  const parent = parseTraceparent(run.traceParent ?? undefined) ?? (run.traceId !== null && isValidTraceId(run.traceId) ? mintSpanContext(ids, run.traceId) : undefined);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/**
 * The active context, or, when no span is active in it, one whose remote parent is `parent`: work
 * continues the caller's trace if the caller has one, else the trace it was handed.
 */
export function contextWithParent(parent: SpanContext | undefined): Context {
  const active = context.active();
  if (!parent || trace.getSpanContext(active)) return active;
  return trace.setSpanContext(active, parent);
}

/** Marks the span failed with `err` (status ERROR and an exception event). */
export function recordFailure(span: Span, err: unknown): void {
  if (!span.isRecording()) return;
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/**
 * Runs `fn` inside a new active span `name` (a child of the active span, or of `parent`); records
 * a thrown error on the span (status ERROR) and rethrows it; always ends the span. `attributes`
 * is called only when the span records, so an unsampled call builds nothing; without an SDK `fn`
 * just runs, given a span that records nothing.
 */
export function withSpan<T>(
  name: string,
  fn: (span: Span) => Promise<T>,
  options: { attributes?: () => Attributes; kind?: SpanOptions['kind']; parent?: Context } = {},
): Promise<T> {
  if (!tracingEnabled()) return fn((nonRecording ??= trace.wrapSpanContext(INVALID_SPAN_CONTEXT)));
  const parent = options.parent ?? context.active();
  const span = kilnTracer().startSpan(name, options.kind === undefined ? {} : { kind: options.kind }, parent);
  if (options.attributes && span.isRecording()) span.setAttributes(options.attributes());
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      recordFailure(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Trace id of the active span, if one with a valid context is active. */
export function currentTraceId(): string | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}
