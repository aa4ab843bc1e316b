/**
 * The `retention` sub-port of the SQLite store: each prune is one BEGIN IMMEDIATE transaction
 * that picks at most `limit` expired runs (oldest finished first, by the runs_finished index)
 * and deletes each with its child rows, children first; then at most `limit` request records.
 */
import type { PruneCounts, RetentionPolicy, RetentionPort } from '../../core/ports/retention.ts';
import { noPruneCounts } from '../../core/ports/retention.ts';
import { runPeriods } from '../shared/retention-periods.ts';
import type { SqliteContext } from './context.ts';
import type { ExpiredRunRow } from './sql/retention.ts';

/** Each prunable status with the cutoff of its period (finished at or before), when it has one. */
function cutoffs(policy: RetentionPolicy, now: number): { status: string; cutoff: number }[] {
  return runPeriods(policy).map(({ status, periodMs }) => ({ status, cutoff: now - periodMs }));
}

/** Deletes at most `limit` expired runs with their rows, and at most `limit` request records. */
function prune(ctx: SqliteContext, policy: RetentionPolicy, limit: number): PruneCounts {
  const sql = ctx.sql();
  const now = ctx.clock.now();
  const candidates: ExpiredRunRow[] = [];
  for (const { status, cutoff } of cutoffs(policy, now)) candidates.push(...sql.selectExpiredRuns.all({ status, cutoff, limit }));
  candidates.sort((a, b) => a.finished_at - b.finished_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  const counts = noPruneCounts();
  for (const { id } of candidates.slice(0, limit)) {
    counts.stageRecords += sql.deleteRunStageRecords.run(id).changes;
    counts.ledgerEntries += sql.deleteRunLedger.run(id).changes;
    counts.jobs += sql.deleteRunJobs.run(id).changes;
    counts.attempts += sql.deleteRunAttempts.run(id).changes;
    sql.deleteRunRetiredJobs.run(id);
    counts.runs += sql.deleteRun.run(id).changes;
  }
  if (policy.requestsMs !== null) counts.requests = sql.deleteExpiredRequests.run({ cutoff: now - policy.requestsMs, limit }).changes;
  return counts;
}

/** What pruning until nothing is left would delete. */
function count(ctx: SqliteContext, policy: RetentionPolicy): PruneCounts {
  const sql = ctx.sql();
  const now = ctx.clock.now();
  const counts = noPruneCounts();
  for (const { status, cutoff } of cutoffs(policy, now)) {
    const row = sql.countExpiredRuns.get({ status, cutoff });
    if (!row) continue;
    counts.runs += row.runs;
    counts.stageRecords += row.stage_records;
    counts.ledgerEntries += row.ledger_entries;
    counts.jobs += row.jobs;
    counts.attempts += row.attempts;
  }
  if (policy.requestsMs !== null) counts.requests = sql.countExpiredRequests.get(now - policy.requestsMs)?.n ?? 0;
  return counts;
}

/** Retention over `ctx`. */
export function createRetentionPort(ctx: SqliteContext): RetentionPort {
  return {
    prune: ctx.write((policy, limit) => prune(ctx, policy, limit)),
    count: ctx.read((policy) => count(ctx, policy)),
  };
}
