/**
 * The `stats` sub-port of the Redis store: recorded queue activity per queue and minute (its own
 * keys, routines/lib-stats.lua), the ages of ready jobs and dead letters by error code. Each
 * method is one script; the counted rows are assembled by the code every store shares
 * (stores/shared/activity.ts), so the stores agree on order and shape.
 */
import type { ErrorClass } from '../../core/errors.ts';
import type { ActivitySample, DeadLetterGroup, QueueActivityQuery, QueueActivityReport, StatsPort } from '../../core/ports/stats.ts';
import { ACTIVITY_RETENTION_MS, JOB_AGE_BOUNDS_MS, activityWindow } from '../../core/ports/stats.ts';
import { activityReport, deadLetterGroupsFromRows, sumSamples } from '../shared/activity.ts';
import type { RedisContext, ScriptArg } from './context.ts';
import { listOf } from './rows.ts';

type List<T> = T[] | Record<string, never>;

/** What stats-queue-activity.lua counts: activity per queue and minute, ready jobs per queue and age bucket. */
interface ActivityCounts {
  now: string;
  activity: List<[queue: string, bucket: number, completed: number, failed: number]>;
  ready: List<[queue: string, bucket: number, n: number]>;
}

/** A group as stats-dead-letter-groups.lua counts it. */
interface GroupCount {
  code: string;
  class: ErrorClass;
  message: string;
  count: number;
  queues: List<string>;
  latest: string;
}

async function recordActivity(ctx: RedisContext, samples: readonly ActivitySample[]): Promise<void> {
  const sums = sumSamples(samples);
  if (sums.length === 0) return;
  const args: ScriptArg[] = [ACTIVITY_RETENTION_MS, ...sums.flatMap((s) => [s.queue, s.completed, s.failed])];
  await ctx.call('stats-record-activity', args);
}

async function queueActivity(ctx: RedisContext, query: QueueActivityQuery): Promise<QueueActivityReport> {
  // The width and count as activityWindow normalises them; the script places the window at its now.
  const { bucketMs, buckets } = activityWindow(0, query);
  const counts = await ctx.call<ActivityCounts>('stats-queue-activity', [bucketMs, buckets, ...JOB_AGE_BOUNDS_MS]);
  const now = Number(counts.now);
  return activityReport(activityWindow(now, query), now, {
    activity: listOf(counts.activity).map(([queue, bucket, completed, failed]) => ({ queue, bucket, completed, failed })),
    readyAges: listOf(counts.ready).map(([queue, bucket, n]) => ({ queue, bucket, n })),
  });
}

async function deadLetterGroups(ctx: RedisContext): Promise<DeadLetterGroup[]> {
  const groups = listOf(await ctx.call<List<GroupCount>>('stats-dead-letter-groups'));
  return deadLetterGroupsFromRows(
    groups.map((g) => ({ code: g.code, error_class: g.class, message: g.message, count: g.count, queues: listOf(g.queues), latest_job_id: g.latest })),
  );
}

/** The aggregates of the store. */
export function createStatsPort(ctx: RedisContext): StatsPort {
  return ctx.port<StatsPort>({
    recordActivity: (samples) => recordActivity(ctx, samples),
    queueActivity: (query) => queueActivity(ctx, query),
    deadLetterGroups: () => deadLetterGroups(ctx),
  });
}
