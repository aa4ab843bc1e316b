/**
 * The trace context a submission gives its runs. `kiln.submit` starts as a child of the active
 * span (an HTTP request's server span, say), or else of the caller's explicit `traceparent` (or
 * `traceId`); each run then stores the submit span as its trace parent, so its attempts in any
 * process join that trace. Without an SDK there is no submit span: a run stores its caller's
 * trace, or none (the HTTP API always passes one: the client's, or a fresh one it answers with).
 */
import { INVALID_SPAN_CONTEXT, isSpanContextValid, isValidTraceId, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import type { IdGenerator } from '../core/ids.ts';
import type { SubmitOptions } from './kiln-types.ts';
import { contextWithParent, formatTraceparent, mintSpanContext, parseTraceparent } from './tracing.ts';

/** A run's trace fields: both, or neither (no trace). */
export type RunTrace = { traceId: string; traceParent: string } | { traceId?: never; traceParent?: never };

/** How one submission's runs get their trace context. */
export interface SubmissionTrace {
  /** The context `kiln.submit` starts in. */
  readonly parent: Context;
  /** The trace id and parent of the run of item `index`, given the submit span; none without a trace. */
  ofItem(index: number, span: Span): RunTrace;
}

/** The trace an item's options name, if any (`traceparent` wins over `traceId`). */
function explicitParent(options: SubmitOptions | undefined, ids: IdGenerator): SpanContext | undefined {
  if (!options) return undefined;
  const { traceparent, traceId } = options;
  return parseTraceparent(traceparent) ?? (traceId !== undefined && isValidTraceId(traceId) ? mintSpanContext(ids, traceId) : undefined);
}

/** The trace context of the runs of `items` (see the module comment). */
export function submissionTrace(items: readonly { options?: SubmitOptions }[], ids: IdGenerator): SubmissionTrace {
  const explicit = items.map((item) => explicitParent(item.options, ids));
  return {
    parent: contextWithParent(explicit.find((e) => e !== undefined)),
    ofItem(index, span): RunTrace {
      const submitted = span.spanContext();
      const own = explicit[index];
      // Identity first: without an SDK the span is the shared non-recording one.
      const valid = submitted !== INVALID_SPAN_CONTEXT && isSpanContextValid(submitted);
      // An item naming another trace than the one submitting it keeps its own (a bulk submit of
      // runs that belong to different requests).
      const chosen = own && (!valid || own.traceId !== submitted.traceId) ? own : valid ? submitted : undefined;
      return chosen ? { traceId: chosen.traceId, traceParent: formatTraceparent(chosen) } : {};
    },
  };
}
