/**
 * The `reads` sub-port of the Redis store: runs, jobs, queue stats, the ledger, failed attempts
 * and dead letters. Each method is one read-only script (routines/reads-*.lua), so what it returns
 * was read at one instant; the scripts walk the indexes of lib-keys.lua and page where the port
 * pages.
 */
import type { FailedAttempt, Job, LedgerEntry, QueueStats, Run } from '../../core/model.ts';
import type { ListDeadLettersQuery, ListJobsQuery, ListRunsQuery, ReadsPort, RunDetail } from '../../core/ports/reads.ts';
import { AFTER_EVERY_ID, runIdRange } from '../shared/run-window.ts';
import { compareNames } from '../shared/activity.ts';
import type { RedisContext, ScriptArg } from './context.ts';
import { failedAttemptFrom, jobFrom, ledgerEntryFrom, listOf, runFrom, stageFrom, type FlatHash } from './rows.ts';

/** An optional script argument: '' when absent, '=' + the value when given (see lib-reads.lua). */
export function optionalArg(value: string | number | undefined): string {
  return value === undefined ? '' : `=${value}`;
}

/** A listing's limit as a whole number of rows (0 lists nothing). */
function listLimit(limit: number): number {
  return Math.max(0, Math.floor(limit));
}

type Flats = FlatHash[] | Record<string, never>;

/** One row of reads-queue-stats.lua: queue, paused, ready, scheduled, leased, parked, dead, oldest availableAt. */
type QueueStatsRow = [string, number, number, number, number, number, number, string];

async function getRun(ctx: RedisContext, runId: string): Promise<RunDetail | null> {
  const found = await ctx.call<{ run: FlatHash; stages: Flats } | null>('reads-get-run', [runId]);
  return found && { run: runFrom(found.run), stages: listOf(found.stages).map(stageFrom) };
}

async function listRuns(ctx: RedisContext, query: ListRunsQuery): Promise<Run[]> {
  const range = runIdRange(query);
  const args: ScriptArg[] = [
    optionalArg(query.pipeline),
    optionalArg(query.status),
    optionalArg(query.subjectId),
    optionalArg(query.tenant),
    optionalArg(query.createdAfter),
    optionalArg(query.createdBefore),
    optionalArg(range.from === '' ? undefined : range.from),
    optionalArg(range.before === AFTER_EVERY_ID ? undefined : range.before),
    listLimit(query.limit),
  ];
  return listOf(await ctx.call<Flats>('reads-list-runs', args)).map(runFrom);
}

async function getJob(ctx: RedisContext, jobId: string): Promise<Job | null> {
  const flat = await ctx.call<FlatHash | null>('reads-get-job', [jobId]);
  return flat && jobFrom(flat);
}

async function listJobs(ctx: RedisContext, query: ListJobsQuery): Promise<Job[]> {
  const args = [optionalArg(query.queue), optionalArg(query.runId), optionalArg(query.state), listLimit(query.limit), optionalArg(query.tenant)];
  return listOf(await ctx.call<Flats>('reads-list-jobs', args)).map(jobFrom);
}

async function queueStats(ctx: RedisContext): Promise<QueueStats[]> {
  const { now, queues } = await ctx.call<{ now: string; queues: QueueStatsRow[] | Record<string, never> }>('reads-queue-stats');
  return listOf(queues)
    .map(([queue, paused, ready, scheduled, leased, parked, dead, oldest]): QueueStats => ({
      queue,
      paused: paused === 1,
      ready,
      scheduled,
      leased,
      parked,
      dead,
      // Age since the job could first run, so a backoff does not count as queueing delay.
      oldestReadyAgeMs: oldest === '' ? 0 : Number(now) - Number(oldest),
    }))
    .sort((a, b) => compareNames(a.queue, b.queue));
}

async function readLedger(ctx: RedisContext, runId: string): Promise<LedgerEntry[]> {
  return listOf(await ctx.call<Flats>('reads-read-ledger', [runId])).map(ledgerEntryFrom);
}

async function listAttempts(ctx: RedisContext, runId: string): Promise<FailedAttempt[]> {
  return listOf(await ctx.call<string[] | Record<string, never>>('reads-list-attempts', [runId])).map(failedAttemptFrom);
}

async function listDeadLetters(ctx: RedisContext, query: ListDeadLettersQuery): Promise<Job[]> {
  const args = [optionalArg(query.code), optionalArg(query.queue), optionalArg(query.before), listLimit(query.limit), optionalArg(query.tenant)];
  return listOf(await ctx.call<Flats>('reads-list-dead-letters', args)).map(jobFrom);
}

/** The read-only views of the store. */
export function createReadsPort(ctx: RedisContext): ReadsPort {
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
