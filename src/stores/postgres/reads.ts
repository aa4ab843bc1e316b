/**
 * The `reads` sub-port of the PostgreSQL store: runs, jobs, queue stats and the ledger. Each read
 * is one statement, so a run and its stage records come from the same snapshot.
 */
import type pg from 'pg';
import type { Job, LedgerEntry, QueueStats, Run } from '../../core/model.ts';
import type { ListJobsQuery, ListRunsQuery, ReadsPort, RunDetail } from '../../core/ports/reads.ts';
import type { PgContext } from './context.ts';
import { queryAdHoc, queryRows } from './database.ts';
import {
  jobFromRow,
  ledgerFromRow,
  queueStatsFromRow,
  runFromRow,
  stageFromRow,
  type JobRow,
  type LedgerRow,
  type QueueStatsRow,
  type RunRow,
  type StageRow,
} from './rows.ts';
import type { ListingText } from './sql/reads.ts';

/** A run with its stage records in pipeline order, or null. */
async function getRun(ctx: PgContext, runId: string): Promise<RunDetail | null> {
  const [row] = await queryRows<{ run: RunRow; stages: StageRow[] }>(ctx.pool, ctx.sql.reads.getRun, [runId]);
  return row ? { run: runFromRow(row.run), stages: row.stages.map(stageFromRow) } : null;
}

/** A filter: the column, its operator, and the value (undefined: the filter is not given). */
type Filter = readonly [column: string, op: string, value: unknown];

/**
 * Runs a listing with the filters given (the others are left out of the text, so the planner sees
 * only the conditions that apply), parameters numbered from `$1`, the limit last.
 */
async function listing<R extends pg.QueryResultRow>(ctx: PgContext, text: ListingText, filters: readonly Filter[], limit: number): Promise<R[]> {
  const present = filters.filter(([, , value]) => value !== undefined);
  const conditions = present.map(([column, op], i) => `${column} ${op} $${i + 1}`).join(' AND ');
  const values = present.map(([, , value]) => value);
  // A row limit as a parameter: a whole number, at least 0.
  values.push(Math.max(0, Math.floor(limit)));
  return queryAdHoc<R>(ctx.pool, text(conditions === '' ? '' : `WHERE ${conditions}`, values.length), values);
}

/** Runs matching the filter, newest first. */
async function listRuns(ctx: PgContext, query: ListRunsQuery): Promise<Run[]> {
  const filters: Filter[] = [
    ['pipeline', '=', query.pipeline],
    ['status', '=', query.status],
    ['subject_id', '=', query.subjectId],
    ['id', '<', query.before],
  ];
  return (await listing<RunRow>(ctx, ctx.sql.reads.listRuns, filters, query.limit)).map(runFromRow);
}

/** A job, or null (deleted or never existed). */
async function getJob(ctx: PgContext, jobId: string): Promise<Job | null> {
  const [row] = await queryRows<JobRow>(ctx.pool, ctx.sql.reads.getJob, [jobId]);
  return row ? jobFromRow(row) : null;
}

/** Jobs matching the filter, oldest first. */
async function listJobs(ctx: PgContext, query: ListJobsQuery): Promise<Job[]> {
  const filters: Filter[] = [
    ['run_id', '=', query.runId],
    ['queue', '=', query.queue],
    ['state', '=', query.state],
  ];
  return (await listing<JobRow>(ctx, ctx.sql.reads.listJobs, filters, query.limit)).map(jobFromRow);
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

/** Read-only views over the context's pool. */
export function createReadsPort(ctx: PgContext): ReadsPort {
  return ctx.port<ReadsPort>({
    getRun: (runId) => getRun(ctx, runId),
    listRuns: (query) => listRuns(ctx, query),
    getJob: (jobId) => getJob(ctx, jobId),
    listJobs: (query) => listJobs(ctx, query),
    queueStats: () => queueStats(ctx),
    readLedger: (runId) => readLedger(ctx, runId),
  });
}
