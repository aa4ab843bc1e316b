/**
 * `jobs.commit` of the Redis store: every item of the batch in ONE call of
 * routines/jobs-commit.lua, as flat arguments (no JSON for the script to decode), each with the
 * id of the job it may enqueue (its next stage or its compensation), whose key names the run by
 * a placeholder the script fills in.
 */
import type { RunStatus } from '../../../core/model.ts';
import type { CommitItem, CommitResult, JobSpec } from '../../../core/ports/jobs.ts';
import type { RedisContext } from '../context.ts';
import { toJson } from '../rows.ts';
import { errorText, scriptJobSpec, statusesInto } from './scripts.ts';

/** Run statuses that may move to `parked`, from the one transition table. */
const PARK_FROM = statusesInto('parked');

/** Appends a job spec as the script reads it: '0', or '1' and its fields. */
function pushSpec(ctx: RedisContext, args: string[], spec: JobSpec | null): void {
  if (spec === null) {
    args.push('0');
    return;
  }
  const s = scriptJobSpec(ctx, spec);
  args.push('1', s.id, s.stage, s.queue, s.kind, s.maxAttempts, s.priority, s.key);
}

/** Appends one item as the script reads it (see jobs-commit.lua's header). */
function pushItem(ctx: RedisContext, args: string[], item: CommitItem): void {
  args.push(item.type, item.lease.jobId, item.lease.token);
  if (item.type === 'complete') {
    args.push(toJson(item.output), String(item.durationMs));
    pushSpec(ctx, args, item.next);
    const publish = item.publish ?? [];
    args.push(String(publish.length));
    for (const p of publish) args.push(p.subjectId, p.profile, p.artifactRef, String(p.subjectVersion));
    // The lock only fences publications.
    const lock = publish.length > 0 ? item.lock : undefined;
    args.push(lock?.key ?? '', lock === undefined ? '' : String(lock.fence));
    return;
  }
  const { decision } = item;
  args.push(errorText(item.error), String(item.durationMs), decision.action, decision.action === 'retry' ? String(Math.max(0, decision.delayMs)) : '0');
  pushSpec(ctx, args, decision.action === 'dead_letter' || decision.action === 'fail' ? decision.rollback : null);
}

/** Applies the items in order in one script (see `JobsPort.commit`); results in input order. */
export async function commit(ctx: RedisContext, items: readonly CommitItem[]): Promise<CommitResult[]> {
  if (items.length === 0) return [];
  const args: string[] = [PARK_FROM, ctx.wakeOrigin];
  for (const item of items) pushItem(ctx, args, item);
  const reply = await ctx.callReply<(string | null)[]>('jobs-commit', args);
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
