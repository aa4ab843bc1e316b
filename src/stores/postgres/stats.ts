/**
 * The `stats` sub-port of the PostgreSQL store: queue activity and dead letters by error code,
 * each one statement (one snapshot). The activity window is placed on the store's clock (the
 * database's, read first in production) and counted by one ad-hoc statement.
 */
import type { DeadLetterGroup, QueueActivityQuery, QueueActivityReport, StatsPort } from '../../core/ports/stats.ts';
import { activityReport, activityWindow, deadLetterGroupsFromRows, type BucketCountRow, type DeadLetterGroupRow } from '../shared/activity.ts';
import { storeNow, type PgContext } from './context.ts';
import { queryAdHoc, queryRows } from './database.ts';

/** A row of the activity statement: which count it is, then the count. */
type ActivityRow = BucketCountRow & { kind: 'completed' | 'failed' | 'ready' };

/** Completions and failures per queue and bucket, and the ages of the jobs ready now. */
async function queueActivity(ctx: PgContext, query: QueueActivityQuery): Promise<QueueActivityReport> {
  const now = await storeNow(ctx);
  const window = activityWindow(now, query);
  const rows = await queryAdHoc<ActivityRow>(ctx.pool, ctx.sql.stats.queueActivity, [window.from, window.bucketMs, now]);
  return activityReport(window, now, {
    completed: rows.filter((row) => row.kind === 'completed'),
    failed: rows.filter((row) => row.kind === 'failed'),
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
    queueActivity: (query) => queueActivity(ctx, query),
    deadLetterGroups: () => deadLetterGroups(ctx),
  });
}
