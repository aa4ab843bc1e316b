/**
 * `jobs.commit`: a batch of completions and failures applied in order in ONE transaction, each
 * fenced by its own lease, by one call of the `commit_batch_with_publications` function
 * (routines/jobs-commit.sql: completions of distinct runs set-wise, anything else item by item;
 * each committed completion's publications by compare-and-set). This side turns the items into
 * that function's JSON input (the ids of jobs to enqueue, their idempotency keys built by
 * core/keys.ts with the run id left as a placeholder the function fills in, the publications)
 * and maps the outcomes back.
 */
import { jobIdempotencyKey } from '../../../core/keys.ts';
import { RunStatus, type RunStatus as RunStatusType } from '../../../core/model.ts';
import type { CommitItem, CommitResult, JobSpec } from '../../../core/ports/jobs.ts';
import type { PublicationRequest } from '../../../core/ports/publications.ts';
import { RUN_TRANSITIONS } from '../../../core/run/transitions.ts';
import type { PgContext } from '../context.ts';
import { queryRows } from '../database.ts';
import { errorJsonText, toJsonText } from '../rows.ts';

/** Stands for the run id in an enqueued job's key; the commit functions replace it. */
export const RUN_ID_PLACEHOLDER = '\u0001run\u0001';

/** Run statuses that may move to `parked`, from the one transition table. */
const PARK_FROM: readonly RunStatusType[] = (Object.keys(RUN_TRANSITIONS) as RunStatusType[]).filter((from) =>
  RUN_TRANSITIONS[from].includes(RunStatus.parked),
);

/** The `enqueue_*` fields of an item that enqueues `spec` (nothing for null). */
function enqueueFields(ctx: PgContext, spec: JobSpec | null): Record<string, string | number> {
  if (spec === null) return {};
  return {
    enqueue_id: ctx.ids.next('job'),
    enqueue_stage: spec.stage,
    enqueue_queue: spec.queue,
    enqueue_kind: spec.kind,
    enqueue_key: jobIdempotencyKey(RUN_ID_PLACEHOLDER, spec.stage, spec.kind),
    enqueue_max_attempts: spec.maxAttempts,
    enqueue_priority: spec.priority,
  };
}

/**
 * The `publish` field of a completion (a JSON array of `publication_request` objects); nothing
 * when it publishes nothing, so such batches keep the plain set-wise path.
 */
function publishFields(publish: readonly PublicationRequest[] | undefined): { publish?: Record<string, string | number>[] } {
  if (publish === undefined || publish.length === 0) return {};
  return {
    publish: publish.map((p) => ({
      subject_id: p.subjectId,
      profile: p.profile,
      artifact_ref: p.artifactRef,
      subject_version: p.subjectVersion,
    })),
  };
}

/** One item as a `commit_item` JSON object. */
function itemJson(ctx: PgContext, item: CommitItem): Record<string, unknown> {
  const base = { type: item.type, job_id: item.lease.jobId, token: item.lease.token, duration_ms: item.durationMs };
  if (item.type === 'complete') {
    // The lock only fences publications: without any, it is left out (the plain set-wise path).
    const lock = item.lock !== undefined && item.publish !== undefined && item.publish.length > 0 ? { lock_key: item.lock.key, lock_fence: item.lock.fence } : {};
    return { ...base, output: toJsonText(item.output), ...enqueueFields(ctx, item.next), ...publishFields(item.publish), ...lock };
  }
  const { decision } = item;
  return {
    ...base,
    error: errorJsonText(item.error),
    action: decision.action,
    delay_ms: decision.action === 'retry' ? Math.max(0, Math.round(decision.delayMs)) : null,
    // dead_letter and fail may start a compensation.
    ...enqueueFields(ctx, decision.action === 'dead_letter' || decision.action === 'fail' ? decision.rollback : null),
  };
}

interface CommitRow {
  outcome: 'committed' | 'lease_lost' | 'cancelled';
  run_status: RunStatusType | null;
  woken_queue: string | null;
  /** Committed completions: how many of their publications compare-and-set refused. */
  publications_refused: number | null;
}

/** Applies the items in order, each fenced by its own lease; results in input order. */
export async function commit(ctx: PgContext, items: readonly CommitItem[]): Promise<CommitResult[]> {
  if (items.length === 0) return [];
  const payload = JSON.stringify(items.map((item) => itemJson(ctx, item)));
  const rows = await queryRows<CommitRow>(ctx.pool, ctx.sql.jobs.commit, [ctx.now(), payload, ctx.channel, PARK_FROM]);
  ctx.wake(rows.flatMap((row) => (row.woken_queue === null ? [] : [row.woken_queue])));
  return rows.map((row): CommitResult => {
    if (row.outcome !== 'committed') return { outcome: row.outcome };
    if (row.run_status === null) throw new Error('commit_batch_with_publications returned a committed item without a run status');
    // "Absent or 0 when none": absent, so a result without publications reads as before.
    const refused = row.publications_refused ?? 0;
    return { outcome: 'committed', runStatus: row.run_status, ...(refused > 0 ? { publicationsRefused: refused } : {}) };
  });
}
