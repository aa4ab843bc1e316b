/**
 * The `reads` sub-port of the SQLite store: runs, jobs, queue stats, ledger, failed attempts and
 * dead letters. Each runs in one deferred (read) transaction, so a run and its stage records come
 * from the same snapshot.
 */
import type { FailedAttempt, Job, LedgerEntry, QueueStats, Run } from '../../core/model.ts';
import type { ListDeadLettersQuery, ListJobsQuery, ListRunsQuery, ReadsPort, RunDetail } from '../../core/ports/reads.ts';
import { AFTER_EVERY_ID, runIdRange } from '../shared/run-window.ts';
import type { SqliteContext } from './context.ts';
import { failedAttemptFromRow, jobFromRow, ledgerFromRow, runFromRow, stageFromRow } from './rows.ts';
import { runListingPath } from './sql/reads.ts';

/** A run with its stage records in pipeline order, or null. */
function getRun(ctx: SqliteContext, runId: string): RunDetail | null {
  const sql = ctx.sql();
  const row = sql.selectRun.get(runId);
  if (!row) return null;
  return { run: runFromRow(row), stages: sql.selectStagesOfRun.all(runId).map(stageFromRow) };
}

/** Runs matching the filter, newest first (ids sort by creation time), along the narrowest index. */
function listRuns(ctx: SqliteContext, query: ListRunsQuery): Run[] {
  const range = runIdRange(query);
  const rows = ctx
    .sql()
    .listRuns(runListingPath(query))
    .all({
      pipeline: query.pipeline ?? null,
      status: query.status ?? null,
      subject_id: query.subjectId ?? null,
      tenant: query.tenant ?? null,
      created_after: query.createdAfter ?? null,
      created_before: query.createdBefore ?? null,
      id_from: range.from,
      before: range.before,
      limit: Math.max(0, query.limit),
    });
  return rows.map(runFromRow);
}

/** A job, or null (deleted or never existed). */
function getJob(ctx: SqliteContext, jobId: string): Job | null {
  const row = ctx.sql().selectJob.get(jobId);
  return row ? jobFromRow(row) : null;
}

/** Jobs matching the filter, oldest first. */
function listJobs(ctx: SqliteContext, query: ListJobsQuery): Job[] {
  const sql = ctx.sql();
  const params = { queue: query.queue ?? null, state: query.state ?? null, tenant: query.tenant ?? null, limit: Math.max(0, query.limit) };
  const rows = query.runId === undefined ? sql.listJobs.all(params) : sql.listJobsOfRun.all({ ...params, run_id: query.runId });
  return rows.map(jobFromRow);
}

function emptyStats(queue: string, paused: boolean): QueueStats {
  return { queue, paused, ready: 0, scheduled: 0, leased: 0, parked: 0, dead: 0, oldestReadyAgeMs: 0 };
}

/** Every queue that has jobs or was paused (or resumed), by name. */
function queueStats(ctx: SqliteContext): QueueStats[] {
  const now = ctx.clock.now();
  const sql = ctx.sql();
  const byQueue = new Map<string, QueueStats>();
  for (const row of sql.selectQueues.all()) byQueue.set(row.name, emptyStats(row.name, row.paused === 1));
  for (const row of sql.queueJobCounts.all({ now })) {
    const stats = byQueue.get(row.queue) ?? emptyStats(row.queue, false);
    stats.ready = row.ready;
    stats.scheduled = row.scheduled;
    stats.leased = row.leased;
    stats.parked = row.parked;
    stats.dead = row.dead;
    // Age since the job could first run, so a backoff does not count as queueing delay.
    stats.oldestReadyAgeMs = row.oldest_ready_at === null ? 0 : now - row.oldest_ready_at;
    byQueue.set(row.queue, stats);
  }
  return [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}

/** Ledger entries of a run, in completion order. */
function readLedger(ctx: SqliteContext, runId: string): LedgerEntry[] {
  return ctx.sql().selectLedgerOfRun.all(runId).map(ledgerFromRow);
}

/** Failed attempts of a run, in commit order. */
function listAttempts(ctx: SqliteContext, runId: string): FailedAttempt[] {
  return ctx.sql().selectAttemptsOfRun.all(runId).map(failedAttemptFromRow);
}

/** Dead stage jobs of dead-lettered runs, newest first. */
function listDeadLetters(ctx: SqliteContext, query: ListDeadLettersQuery): Job[] {
  const params = { code: query.code ?? null, queue: query.queue ?? null, tenant: query.tenant ?? null, before: query.before ?? AFTER_EVERY_ID, limit: Math.max(0, query.limit) };
  return ctx.sql().listDeadLetters.all(params).map(jobFromRow);
}

/** The read-only views over `ctx`. */
export function createReadsPort(ctx: SqliteContext): ReadsPort {
  return {
    getRun: ctx.read((runId) => getRun(ctx, runId)),
    listRuns: ctx.read((query) => listRuns(ctx, query)),
    getJob: ctx.read((jobId) => getJob(ctx, jobId)),
    listJobs: ctx.read((query) => listJobs(ctx, query)),
    queueStats: ctx.read(() => queueStats(ctx)),
    readLedger: ctx.read((runId) => readLedger(ctx, runId)),
    listAttempts: ctx.read((runId) => listAttempts(ctx, runId)),
    listDeadLetters: ctx.read((query) => listDeadLetters(ctx, query)),
  };
}
