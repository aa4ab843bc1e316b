/**
 * Read-only queries: runs, jobs, queue stats, ledger, publications, referenced artifacts, the
 * clock. Each is one statement, so a run and its stage records come from the same snapshot.
 */
import type { Job, LedgerEntry, QueueStats, Run } from '../../core/model.ts';
import type { Publication } from '../../core/ports/publications.ts';
import type { ListJobsQuery, ListRunsQuery, RunDetail } from '../../core/ports/reads.ts';
import { ARTIFACT_REF_PATTERN } from '../shared/artifact-refs.ts';
import type { PgContext } from './context.ts';
import { queryAdHoc, queryRows } from './database.ts';
import { quoteIdentifier } from './identifiers.ts';
import type { PublicationRow } from '../shared/row-mapping.ts';
import {
  jobFromRow,
  ledgerFromRow,
  publicationFromRow,
  queueStatsFromRow,
  runFromRow,
  stageFromRow,
  type JobRow,
  type LedgerRow,
  type QueueStatsRow,
  type RunRow,
  type StageRow,
} from './rows.ts';

/** A run with its stage records in pipeline order, or null. */
export async function getRun(ctx: PgContext, runId: string): Promise<RunDetail | null> {
  const [row] = await queryRows<{ run: RunRow; stages: StageRow[] }>(ctx.pool, ctx.sql.getRun, [runId]);
  return row ? { run: runFromRow(row.run), stages: row.stages.map(stageFromRow) } : null;
}

/** `WHERE` conditions over the given filters, numbering parameters from `$1`. */
function whereOf(filters: readonly (readonly [column: string, op: string, value: unknown])[]): { where: string; values: unknown[] } {
  const present = filters.filter(([, , value]) => value !== undefined);
  const where = present.map(([column, op], i) => `${column} ${op} $${i + 1}`).join(' AND ');
  return { where: where === '' ? '' : `WHERE ${where}`, values: present.map(([, , value]) => value) };
}

/** A row limit as a parameter: a whole number, at least 0. */
function limitOf(limit: number): number {
  return Math.max(0, Math.floor(limit));
}

/**
 * Runs matching the filter, newest first (ids sort by creation time). The text varies with the
 * filters given, so the planner sees only the conditions that apply (and can use the partial
 * runs_status index for the statuses it holds).
 */
export async function listRuns(ctx: PgContext, query: ListRunsQuery): Promise<Run[]> {
  const { where, values } = whereOf([
    ['pipeline', '=', query.pipeline],
    ['status', '=', query.status],
    // With a subject, the planner walks runs_subject_id (0008) within it, newest first.
    ['subject_id', '=', query.subjectId],
    ['id', '<', query.before],
  ]);
  const text = `SELECT * FROM ${quoteIdentifier(ctx.schema)}.runs ${where} ORDER BY id DESC LIMIT $${values.length + 1}`;
  return (await queryAdHoc<RunRow>(ctx.pool, text, [...values, limitOf(query.limit)])).map(runFromRow);
}

/** A job, or null (deleted or never existed). */
export async function getJob(ctx: PgContext, jobId: string): Promise<Job | null> {
  const [row] = await queryRows<JobRow>(ctx.pool, ctx.sql.getJob, [jobId]);
  return row ? jobFromRow(row) : null;
}

/** Jobs matching the filter, oldest first. */
export async function listJobs(ctx: PgContext, query: ListJobsQuery): Promise<Job[]> {
  const { where, values } = whereOf([
    ['run_id', '=', query.runId],
    ['queue', '=', query.queue],
    ['state', '=', query.state],
  ]);
  const text = `SELECT * FROM ${quoteIdentifier(ctx.schema)}.jobs ${where} ORDER BY enqueued_at, id LIMIT $${values.length + 1}`;
  return (await queryAdHoc<JobRow>(ctx.pool, text, [...values, limitOf(query.limit)])).map(jobFromRow);
}

/** Every queue that has jobs or was paused (or resumed), by name (code-point order, as in every store). */
export async function queueStats(ctx: PgContext): Promise<QueueStats[]> {
  const rows = await queryRows<QueueStatsRow>(ctx.pool, ctx.sql.queueStats, [ctx.now()]);
  return rows.map(queueStatsFromRow).sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}

/** Ledger entries of a run, in completion order. */
export async function readLedger(ctx: PgContext, runId: string): Promise<LedgerEntry[]> {
  return (await queryRows<LedgerRow>(ctx.pool, ctx.sql.readLedger, [runId])).map(ledgerFromRow);
}

/** The publication of `(subjectId, profile)`, or null. */
export async function getPublication(ctx: PgContext, subjectId: string, profile: string): Promise<Publication | null> {
  const [row] = await queryRows<PublicationRow>(ctx.pool, ctx.sql.getPublication, [subjectId, profile]);
  return row ? publicationFromRow(row) : null;
}

/** Every publication of `subjectId`, by profile name. */
export async function listPublications(ctx: PgContext, subjectId: string): Promise<Publication[]> {
  return (await queryRows<PublicationRow>(ctx.pool, ctx.sql.listPublications, [subjectId])).map(publicationFromRow);
}

/**
 * Every artifact ref something may still read (see `Store.listReferencedArtifacts`), matched
 * in the database with the pattern every store shares; sorted, unique.
 */
export async function listReferencedArtifacts(ctx: PgContext): Promise<string[]> {
  const rows = await queryRows<{ ref: string }>(ctx.pool, ctx.sql.listReferencedArtifacts, [ARTIFACT_REF_PATTERN]);
  return rows.map((row) => row.ref);
}

/** The store's clock: the injected one in tests, else the database's. */
export async function storeNow(ctx: PgContext): Promise<number> {
  const injected = ctx.now();
  if (injected !== null) return injected;
  const [row] = await queryRows<{ now: number }>(ctx.pool, ctx.sql.dbNow, []);
  if (!row) throw new Error('the database returned no time');
  return row.now;
}
