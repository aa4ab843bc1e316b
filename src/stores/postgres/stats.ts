/**
 * The `stats` sub-port of the PostgreSQL store: recorded queue activity (one statement, off the job
 * path), its windowed read with the ages of ready jobs (one ad-hoc statement on a window placed on
 * the store's clock), and dead letters by error code.
 */
import type { ActivitySample, DeadLetterGroup, QueueActivityQuery, QueueActivityReport, StatsPort } from '../../core/ports/stats.ts';
import { ACTIVITY_RETENTION_MS, activityWindow } from '../../core/ports/stats.ts';
import { activityReport, deadLetterGroupsFromRows, sumSamples, type DeadLetterGroupRow } from '../shared/activity.ts';
import { storeNow, type PgContext } from './context.ts';
import { queryAdHoc, queryRows } from './database.ts';

/** A row of the activity statement: which count it is, then the counts. */
interface ActivityRow {
  kind: 'activity' | 'ready';
  queue: string;
  bucket: number;
  completed: number;
  failed: number;
  n: number;
}

/** Adds the samples to the current minute and drops the minutes past retention. */
async function recordActivity(ctx: PgContext, samples: readonly ActivitySample[]): Promise<void> {
  const sums = sumSamples(samples);
  if (sums.length === 0) return;
  await queryRows(ctx.pool, ctx.sql.stats.recordActivity, [ctx.now(), JSON.stringify(sums), ACTIVITY_RETENTION_MS]);
}

/** Recorded completions and failures per queue and bucket, and the ages of the jobs ready now. */
async function queueActivity(ctx: PgContext, query: QueueActivityQuery): Promise<QueueActivityReport> {
  const now = await storeNow(ctx);
  const window = activityWindow(now, query);
  const rows = await queryAdHoc<ActivityRow>(ctx.pool, ctx.sql.stats.queueActivity, [window.from, window.bucketMs, now]);
  return activityReport(window, now, {
    activity: rows.filter((row) => row.kind === 'activity'),
    readyAges: rows.filter((row) => row.kind === 'ready'),
  });
}

/** Dead letters by error code. */
async function deadLetterGroups(ctx: PgContext): Promise<DeadLetterGroup[]> {
  return deadLetterGroupsFromRows(await queryRows<DeadLetterGroupRow>(ctx.pool, ctx.sql.stats.deadLetterGroups, []));
}

/** Operator aggregates over the context's pool. */
export function createStatsPort(ctx: PgContext): StatsPort {
  return ctx.port<StatsPort>({
    recordActivity: (samples) => recordActivity(ctx, samples),
    queueActivity: (query) => queueActivity(ctx, query),
    deadLetterGroups: () => deadLetterGroups(ctx),
  });
}
