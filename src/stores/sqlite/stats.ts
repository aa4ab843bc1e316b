/**
 * The `stats` sub-port of the SQLite store: queue activity and dead letters by error code, each
 * one read transaction (a consistent snapshot across its statements).
 */
import type { ErrorClass } from '../../core/errors.ts';
import type { DeadLetterGroup, QueueActivityQuery, QueueActivityReport, StatsPort } from '../../core/ports/stats.ts';
import { activityReport, activityWindow, deadLetterGroupsFromRows } from '../shared/activity.ts';
import type { SqliteContext } from './context.ts';

/** Completions and failures per queue and bucket, and the ages of the jobs ready now. */
function queueActivity(ctx: SqliteContext, query: QueueActivityQuery): QueueActivityReport {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  const window = activityWindow(now, query);
  const params = { from: window.from, bucket_ms: window.bucketMs };
  return activityReport(window, now, {
    completed: sql.countCompletions.all(params),
    failed: sql.countFailures.all(params),
    readyAges: sql.countReadyAges.all({ now }),
  });
}

/** Dead letters by error code. */
function deadLetterGroups(ctx: SqliteContext): DeadLetterGroup[] {
  const rows = ctx.sql().deadLetterGroups.all();
  return deadLetterGroupsFromRows(
    rows.map((row) => ({ ...row, error_class: row.error_class as ErrorClass, queues: JSON.parse(row.queues) as string[] })),
  );
}

/** The aggregates over `ctx`. */
export function createStatsPort(ctx: SqliteContext): StatsPort {
  return {
    queueActivity: ctx.read((query) => queueActivity(ctx, query)),
    deadLetterGroups: ctx.read(() => deadLetterGroups(ctx)),
  };
}
