/**
 * `jobs.commit` of the Redis store: every item of the batch in ONE call of
 * routines/jobs-commit.lua, each with the id of the job it may enqueue (its next stage or its
 * compensation), whose key names the run by a placeholder the script fills in. The items go as
 * one JSON argument (measured: as cheap for the script as ~15 flat arguments per item, which
 * cost as much to hand to Lua as cjson.decode saves); the answer comes back as a native array.
 */
import type { RunStatus } from '../../../core/model.ts';
import type { CommitItem, CommitResult } from '../../../core/ports/jobs.ts';
import type { RedisContext } from '../context.ts';
import { toJson } from '../rows.ts';
import { errorText, scriptJobSpec, statusesInto } from './scripts.ts';

/** Run statuses that may move to `parked`, from the one transition table. */
const PARK_FROM = statusesInto('parked');

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
  const reply = await ctx.callReply<(string | null)[]>('jobs-commit', [PARK_FROM, ctx.wakeOrigin, JSON.stringify(batch)]);
  const wake = reply.slice(items.length * 3) as string[];
  // The script published the wake for the other processes.
  ctx.wakeLocal(wake);
  return items.map((_, i): CommitResult => {
    const outcome = reply[i * 3] as CommitResult['outcome'];
    if (outcome !== 'committed') return { outcome };
    const runStatus = reply[i * 3 + 1] as RunStatus;
    const refused = Number(reply[i * 3 + 2]);
    return refused > 0 ? { outcome, runStatus, publicationsRefused: refused } : { outcome, runStatus };
  });
}
