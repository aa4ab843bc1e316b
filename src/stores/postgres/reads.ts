/**
 * The `reads` sub-port of the PostgreSQL store: runs, jobs, queue stats and the ledger. Each read
 * is one statement, so a run and its stage records come from the same snapshot.
 */
import type { FailedAttempt, Job, LedgerEntry, QueueStats, Run } from '../../core/model.ts';
import type { ListDeadLettersQuery, ListJobsQuery, ListRunsQuery, ReadsPort, RunDetail } from '../../core/ports/reads.ts';
import { AFTER_EVERY_ID, runIdRange } from '../shared/run-window.ts';
import type { PgContext } from './context.ts';
import { queryListing, queryRows, type ListingFilter } from './database.ts';
import {
  failedAttemptFromRow,
  jobFromRow,
  ledgerFromRow,
  queueStatsFromRow,
  runFromRow,
  stageFromRow,
  type FailedAttemptRow,
  type JobRow,
  type LedgerRow,
  type QueueStatsRow,
  type RunRow,
  type StageRow,
} from './rows.ts';

/** A run with its stage records in pipeline order, or null. */
async function getRun(ctx: PgContext, runId: string): Promise<RunDetail | null> {
  const [row] = await queryRows<{ run: RunRow; stages: StageRow[] }>(ctx.pool, ctx.sql.reads.getRun, [runId]);
  return row ? { run: runFromRow(row.run), stages: row.stages.map(stageFromRow) } : null;
}

/** Runs matching the filter, newest first. */
async function listRuns(ctx: PgContext, query: ListRunsQuery): Promise<Run[]> {
  const range = runIdRange(query);
  const filters: ListingFilter[] = [
    ['pipeline', '=', query.pipeline],
    ['status', '=', query.status],
    ['subject_id', '=', query.subjectId],
    ['tenant', '=', query.tenant],
    ['created_at', '>=', query.createdAfter],
    ['created_at', '<', query.createdBefore],
    ['id', '>=', range.from === '' ? undefined : range.from],
    ['id', '<', range.before === AFTER_EVERY_ID ? undefined : range.before],
  ];
  return (await queryListing<RunRow>(ctx.pool, ctx.sql.reads.listRuns, filters, query.limit)).map(runFromRow);
}

/** A job, or null (deleted or never existed). */
async function getJob(ctx: PgContext, jobId: string): Promise<Job | null> {
  const [row] = await queryRows<JobRow>(ctx.pool, ctx.sql.reads.getJob, [jobId]);
  return row ? jobFromRow(row) : null;
}

/** Jobs matching the filter, oldest first. */
async function listJobs(ctx: PgContext, query: ListJobsQuery): Promise<Job[]> {
  const filters: ListingFilter[] = [
    ['run_id', '=', query.runId],
    ['queue', '=', query.queue],
    ['state', '=', query.state],
    ['tenant', '=', query.tenant],
  ];
  return (await queryListing<JobRow>(ctx.pool, ctx.sql.reads.listJobs, filters, query.limit)).map(jobFromRow);
}

/** Every queue that has jobs or was paused (or resumed), by name (code-point order, as in every store). */
async function queueStats(ctx: PgContext): Promise<QueueStats[]> {
  const rows = await queryRows<QueueStatsRow>(ctx.pool, ctx.sql.reads.queueStats, [ctx.now()]);
  return rows.map(queueStatsFromRow).sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}

/** Ledger entries of a run, in completion order. */
async function readLedger(ctx: PgContext, runId: string): Promise<LedgerEntry[]> {
  return (await queryRows<LedgerRow>(ctx.pool, ctx.sql.reads.readLedger, [runId])).map(ledgerFromRow);
}

/** Failed attempts of a run, in commit order. */
async function listAttempts(ctx: PgContext, runId: string): Promise<FailedAttempt[]> {
  return (await queryRows<FailedAttemptRow>(ctx.pool, ctx.sql.reads.listAttempts, [runId])).map(failedAttemptFromRow);
}

/** Dead stage jobs of dead-lettered runs, newest first. */
async function listDeadLetters(ctx: PgContext, query: ListDeadLettersQuery): Promise<Job[]> {
  const filters: ListingFilter[] = [
    ["j.last_error ->> 'code'", '=', query.code],
    ['j.queue', '=', query.queue],
    ['j.tenant', '=', query.tenant],
    ['j.id', '<', query.before],
  ];
  return (await queryListing<JobRow>(ctx.pool, ctx.sql.reads.listDeadLetters, filters, query.limit)).map(jobFromRow);
}

/** Read-only views over the context's pool. */
export function createReadsPort(ctx: PgContext): ReadsPort {
  return ctx.port<ReadsPort>({
    getRun: (runId) => getRun(ctx, runId),
    listRuns: (query) => listRuns(ctx, query),
    getJob: (jobId) => getJob(ctx, jobId),
    listJobs: (query) => listJobs(ctx, query),
    queueStats: () => queueStats(ctx),
    readLedger: (runId) => readLedger(ctx, runId),
    listAttempts: (runId) => listAttempts(ctx, runId),
    listDeadLetters: (query) => listDeadLetters(ctx, query),
  });
}
