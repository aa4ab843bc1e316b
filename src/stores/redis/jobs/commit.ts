/**
 * `jobs.commit` of the Redis store: every item of the batch in ONE call of
 * routines/jobs-commit.lua, each with the id of the job it may enqueue (its next stage or its
 * compensation), whose key names the run by a placeholder the script fills in.
 */
import type { RunStatus } from '../../../core/model.ts';
import type { CommitItem, CommitResult } from '../../../core/ports/jobs.ts';
import type { RedisContext } from '../context.ts';
import { toJson } from '../rows.ts';
import { errorText, scriptJobSpec, statusesInto, wakeAfter, type Woken } from './scripts.ts';

/** Run statuses that may move to `parked`, from the one transition table. */
const PARK_FROM = statusesInto('parked');

interface CommitAnswer extends Woken {
  results: { outcome: CommitResult['outcome']; runStatus?: RunStatus; publicationsRefused?: number }[];
}

/** One item as the script takes it (undefined fields left out). */
function itemJson(ctx: RedisContext, item: CommitItem): Record<string, unknown> {
  const base = { type: item.type, jobId: item.lease.jobId, token: item.lease.token, durationMs: String(item.durationMs) };
  if (item.type === 'complete') {
    const publish = item.publish !== undefined && item.publish.length > 0 ? item.publish : undefined;
    return {
      ...base,
      output: toJson(item.output),
      next: item.next === null ? undefined : scriptJobSpec(ctx, item.next),
      publish: publish?.map((p) => ({ subjectId: p.subjectId, profile: p.profile, artifactRef: p.artifactRef, subjectVersion: String(p.subjectVersion) })),
      // The lock only fences publications.
      lockKey: publish === undefined ? undefined : item.lock?.key,
      lockFence: publish === undefined || item.lock === undefined ? undefined : String(item.lock.fence),
    };
  }
  const { decision } = item;
  const rollback = decision.action === 'dead_letter' || decision.action === 'fail' ? decision.rollback : null;
  return {
    ...base,
    error: errorText(item.error),
    action: decision.action,
    delayMs: decision.action === 'retry' ? String(Math.max(0, decision.delayMs)) : undefined,
    rollback: rollback === null ? undefined : scriptJobSpec(ctx, rollback),
  };
}

/** Applies the items in order in one script (see `JobsPort.commit`); results in input order. */
export async function commit(ctx: RedisContext, items: readonly CommitItem[]): Promise<CommitResult[]> {
  if (items.length === 0) return [];
  const batch = items.map((item) => itemJson(ctx, item));
  const answer = await ctx.call<CommitAnswer>('jobs-commit', [JSON.stringify(batch), PARK_FROM]);
  wakeAfter(ctx, answer);
  return answer.results.map((r): CommitResult => {
    if (r.outcome !== 'committed') return { outcome: r.outcome };
    const status = r.runStatus as RunStatus;
    return r.publicationsRefused ? { outcome: 'committed', runStatus: status, publicationsRefused: r.publicationsRefused } : { outcome: 'committed', runStatus: status };
  });
}
