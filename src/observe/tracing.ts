/**
 * Tracing over `@opentelemetry/api` only: kiln creates spans on the tracer `kiln` and users bring
 * their own SDK and exporter. Without one, spans are no-ops, yet trace ids still flow: a run gets
 * a random id from {@link newTraceId}, and spans continued from it (`traceId` option) carry it, so
 * logs correlate either way.
 */
import { randomBytes } from 'node:crypto';
import { context, isSpanContextValid, SpanStatusCode, trace, TraceFlags, type Attributes } from '@opentelemetry/api';

/** Name of the tracer every kiln span is created on. */
export const TRACER_NAME = 'kiln';

/** Options of {@link withSpan}. */
export interface WithSpanOptions {
  /**
   * Continue this trace (32 hex digits), e.g. the trace id stored on a run, when no span is
   * active. Used where work resumes in another process (a worker picking up a job).
   */
  traceId?: string;
}

/**
 * Runs `fn` inside a new active span `name` with `attributes`; records a thrown error on the
 * span (status ERROR) and rethrows it; always ends the span.
 */
export function withSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>, options: WithSpanOptions = {}): Promise<T> {
  const tracer = trace.getTracer(TRACER_NAME);
  const parent = parentContext(options.traceId);
  return tracer.startActiveSpan(name, { attributes }, parent, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
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

/** The active trace id, or a fresh random one (32 hex digits) when no traced span is active. */
export function newTraceId(): string {
  return currentTraceId() ?? randomBytes(16).toString('hex');
}

const TRACE_ID = /^[0-9a-f]{32}$/;

/**
 * The active context, or one whose remote parent carries `traceId` when nothing is active. The
 * parent span id is random: the original span lived in another process and is not known here.
 */
function parentContext(traceId: string | undefined) {
  const active = context.active();
  if (!traceId || !TRACE_ID.test(traceId) || trace.getSpanContext(active)) return active;
  return trace.setSpanContext(active, {
    traceId,
    spanId: randomBytes(8).toString('hex'),
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
}
