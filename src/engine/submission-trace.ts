/**
 * The trace context a submission gives its runs. `kiln.submit` starts as a child of the active
 * span (an HTTP request's server span, say), or else of the caller's explicit `traceparent` (or
 * `traceId`); each run then stores the submit span as its trace parent, so its attempts in any
 * process join that trace. Without an SDK the submit span is the API's no-op and carries its
 * parent's ids, which the run stores instead; a run with no trace at all gets a fresh random one.
 */
import { isSpanContextValid, isValidTraceId, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import type { IdGenerator } from '../core/ids.ts';
import type { SubmitOptions } from './kiln-types.ts';
import { contextWithParent, formatTraceparent, mintSpanContext, parseTraceparent } from './tracing.ts';

/** How one submission's runs get their trace context. */
export interface SubmissionTrace {
  /** The context `kiln.submit` starts in. */
  readonly parent: Context;
  /** The trace id and parent of the run of item `index`, given the submit span. */
  ofItem(index: number, span: Span): { traceId: string; traceParent: string };
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
    ofItem(index, span) {
      const submitted = span.spanContext();
      const own = explicit[index];
      const valid = isSpanContextValid(submitted);
      // An item naming another trace than the one submitting it keeps its own (a bulk submit of
      // runs that belong to different requests).
      const chosen = own && (!valid || own.traceId !== submitted.traceId) ? own : valid ? submitted : mintSpanContext(ids);
      return { traceId: chosen.traceId, traceParent: formatTraceparent(chosen) };
    },
  };
}
