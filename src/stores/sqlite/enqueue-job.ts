/**
 * Enqueuing a job, the move shared by submit, commit and dead-letter (compensations): the
 * idempotency key comes from `core/keys.ts`, and a live job already holding the key absorbs the
 * enqueue (jobs_run_key + ON CONFLICT DO NOTHING).
 */
import { jobIdempotencyKey } from '../../core/keys.ts';
import type { JobSpec } from '../../core/ports/jobs.ts';
import type { SqliteContext } from './context.ts';
import type { RunRow } from './rows.ts';

/** What a job copies from its run; a finished job of the run carries the same values. */
export type JobOwner = Pick<RunRow, 'id' | 'pipeline' | 'tenant' | 'trace_id'>;

/** Enqueues `spec` for `run`, ready at `availableAt`. Returns false when it collapsed into a live job. */
export function enqueueJob(ctx: SqliteContext, run: JobOwner, spec: JobSpec, now: number, availableAt = now): boolean {
  const inserted = ctx.sql().insertJob.run({
    id: ctx.ids.next('job'),
    run_id: run.id,
    pipeline: run.pipeline,
    stage: spec.stage,
    queue: spec.queue,
    kind: spec.kind,
    idempotency_key: jobIdempotencyKey(run.id, spec.stage, spec.kind),
    max_attempts: spec.maxAttempts,
    priority: spec.priority,
    available_at: availableAt,
    enqueued_at: now,
    tenant: run.tenant,
    trace_id: run.trace_id,
  }).changes === 1;
  if (inserted && availableAt <= now) ctx.wake(spec.queue);
  return inserted;
}
