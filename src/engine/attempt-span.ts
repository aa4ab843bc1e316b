/**
 * The span of one job attempt, `<pipeline>.<stage>` (`<pipeline>.<stage>:rollback` for a
 * compensation): a child of the run's stored trace context, whichever process claims the job,
 * so every attempt, retry and redelivery of a run joins the trace of the request that submitted
 * it. Commit, cache and artifact spans of the attempt are its children.
 */
import { isSpanContextValid, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { IdGenerator } from '../core/ids.ts';
import type { StageErrorRecord } from '../core/model.ts';
import type { ClaimedJob } from '../core/ports/jobs.ts';
import { kilnTracer, runTraceContext } from './tracing.ts';

/** How an attempt ended, as recorded on its span (`kiln.outcome`). */
export interface AttemptEnd {
  /** A `StageOutcome`, or `handed_back` (shutdown, unknown stage), or `commit_failed` (the store failed). */
  outcome: string;
  /** The failure of a failed attempt. */
  error?: StageErrorRecord;
}

/** An attempt's span and the context its work runs in (the span active). */
export interface AttemptSpan {
  span: Span;
  context: Context;
  /** The trace id to log: the span's, else the job's stored one. */
  traceId: string | null;
}

/** Starts the span of a claimed job's attempt. */
export function startAttemptSpan(claimed: ClaimedJob, ids: IdGenerator): AttemptSpan {
  const { job } = claimed;
  const parent = runTraceContext(claimed.run, ids);
  const name = job.kind === 'rollback' ? `${job.queue}:rollback` : job.queue;
  const span = kilnTracer().startSpan(name, { kind: SpanKind.CONSUMER }, parent);
  if (span.isRecording()) {
    span.setAttributes({
      'kiln.pipeline': job.pipeline,
      'kiln.stage': job.stage,
      'kiln.queue': job.queue,
      'kiln.run_id': job.runId,
      'kiln.job_id': job.id,
      'kiln.job_kind': job.kind,
      'kiln.attempt': job.attempt,
      'kiln.redelivered': claimed.redelivered,
      ...(job.tenant === null ? {} : { 'kiln.tenant': job.tenant }),
    });
  }
  const spanContext = span.spanContext();
  return { span, context: trace.setSpan(parent, span), traceId: isSpanContextValid(spanContext) ? spanContext.traceId : job.traceId };
}

/** Records how the attempt ended and ends its span. */
export function endAttemptSpan(span: Span, end: AttemptEnd): void {
  if (span.isRecording()) {
    span.setAttribute('kiln.outcome', end.outcome);
    if (end.error) {
      span.setAttributes({ 'kiln.error.class': end.error.class, 'kiln.error.code': end.error.code });
      span.setStatus({ code: SpanStatusCode.ERROR, message: end.error.message });
    }
  }
  span.end();
}
