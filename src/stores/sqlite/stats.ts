/**
 * The `stats` sub-port of the SQLite store: recorded queue activity (written in a transaction of
 * its own, off the job path), its windowed read with the ages of ready jobs, and dead letters by
 * error code. Each method is one transaction.
 */
import type { ErrorClass } from '../../core/errors.ts';
import type { ActivitySample, DeadLetterGroup, QueueActivityQuery, QueueActivityReport, StatsPort } from '../../core/ports/stats.ts';
import { ACTIVITY_RETENTION_MS, activityMinute, activityWindow } from '../../core/ports/stats.ts';
import { activityReport, deadLetterGroupsFromRows, sumSamples } from '../shared/activity.ts';
import type { SqliteContext } from './context.ts';

/** Adds the samples to the current minute and drops the minutes past retention. */
function recordActivity(ctx: SqliteContext, samples: readonly ActivitySample[]): void {
  const sums = sumSamples(samples);
  if (sums.length === 0) return;
  const now = ctx.clock.now();
  const sql = ctx.sql();
  sql.recordActivity.run({ minute_at: activityMinute(now), samples: JSON.stringify(sums) });
  sql.pruneActivity.run(activityMinute(now - ACTIVITY_RETENTION_MS));
}

/** Recorded completions and failures per queue and bucket, and the ages of the jobs ready now. */
function queueActivity(ctx: SqliteContext, query: QueueActivityQuery): QueueActivityReport {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  const window = activityWindow(now, query);
  return activityReport(window, now, {
    activity: sql.countActivity.all({ from: window.from, bucket_ms: window.bucketMs }),
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
    recordActivity: ctx.write((samples) => recordActivity(ctx, samples)),
    queueActivity: ctx.read((query) => queueActivity(ctx, query)),
    deadLetterGroups: ctx.read(() => deadLetterGroups(ctx)),
  };
}
