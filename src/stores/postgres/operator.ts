/**
 * The `operator` sub-port of the PostgreSQL store: cancel, resume, replay, pause and drain. Each
 * is one transaction (pause: one statement); run moves are checked against the transition table
 * of `core/run/transitions.ts`, on rows locked first (jobs, then runs), so the check still holds
 * when the write lands.
 */
import type pg from 'pg';
import { ConflictError, NotFoundError } from '../../core/errors.ts';
import type { Job, Run } from '../../core/model.ts';
import type { OperatorPort } from '../../core/ports/operator.ts';
import { assertReplayable, assertTransition, isTerminal } from '../../core/run/transitions.ts';
import type { PgContext } from './context.ts';
import { inTransaction, queryRows } from './database.ts';
import { jobFromRow, runFromRow, type JobRow, type RunRow } from './rows.ts';
import { cancelledError, endLockedRuns, lockRuns } from './jobs/end-runs.ts';

/**
 * Makes a parked or dead job (locked by the caller) ready now as a fresh start, its stage record
 * `pending`, its run `running` at the job's stage; `clearError` also clears the run's error.
 */
async function restartJob(
  ctx: PgContext,
  client: pg.PoolClient,
  jobId: string,
  clearError: boolean,
): Promise<{ job: JobRow; run: RunRow }> {
  const [row] = await queryRows<{ job: JobRow; run: RunRow }>(client, ctx.sql.operator.restartJob, [ctx.now(), jobId, ctx.channel, clearError]);
  if (!row) throw new NotFoundError('job', jobId);
  return row;
}

/** Cancels a run that has not ended: its jobs deleted, unfinished stages `skipped`. */
async function cancelRun(ctx: PgContext, runId: string, reason: string): Promise<Run> {
  return inTransaction(ctx.pool, async (client) => {
    const run = (await lockRuns(ctx, client, [runId])).get(runId);
    if (!run) throw new NotFoundError('run', runId);
    assertTransition(run.id, run.status, 'cancelled');
    const [ended] = await endLockedRuns(ctx, client, [run.id], 'cancelled', cancelledError(reason));
    if (!ended) throw new NotFoundError('run', runId);
    return runFromRow(ended);
  });
}

/** Parked run -> running; its parked job -> ready now with `attempt = 0`, its stage `pending`. */
async function resumeRun(ctx: PgContext, runId: string): Promise<Run> {
  const restarted = await inTransaction(ctx.pool, async (client) => {
    const [job] = await queryRows<JobRow>(client, ctx.sql.operator.lockParkedJobOfRun, [runId]);
    const run = (await lockRuns(ctx, client, [runId])).get(runId);
    if (!run) throw new NotFoundError('run', runId);
    // `running -> running` is a legal internal move, so "only parked runs resume" is checked here.
    if (run.status !== 'parked' || !job) {
      throw new ConflictError('INVALID_TRANSITION', `run ${run.id} is ${run.status} and cannot be resumed`, {
        details: { runId: run.id, from: run.status, to: 'running' },
      });
    }
    assertTransition(run.id, run.status, 'running');
    return restartJob(ctx, client, job.id, false);
  });
  ctx.wake([restarted.job.queue]);
  return runFromRow(restarted.run);
}

/** Checks that the dead `job` may be replayed, locking its run; throws the reason it may not. */
async function checkReplayable(ctx: PgContext, client: pg.PoolClient, job: JobRow): Promise<void> {
  if (job.state !== 'dead') {
    throw new ConflictError('INVALID_TRANSITION', `job ${job.id} is ${job.state}, only a dead job can be replayed`, {
      details: { jobId: job.id, state: job.state },
    });
  }
  const run = (await lockRuns(ctx, client, [job.run_id])).get(job.run_id);
  if (!run) throw new NotFoundError('run', job.run_id);
  const [rollback] = await queryRows<{ found: boolean }>(client, ctx.sql.operator.selectAnyRollback, [run.id]);
  if (rollback?.found) {
    throw new ConflictError('RUN_COMPENSATED', `run ${run.id} was rolled back; submit a new run instead of replaying`, {
      details: { runId: run.id, jobId: job.id },
    });
  }
  assertReplayable(run.id, run.status, job.id);
  // A live job with the same key would make this one a duplicate; the unique index forbids it.
  const [other] = await queryRows<{ found: boolean }>(client, ctx.sql.operator.selectOtherLiveJobWithKey, [job.run_id, job.idempotency_key, job.id]);
  if (other?.found) {
    throw new ConflictError('INVALID_TRANSITION', `job ${job.id} has a live duplicate; nothing to replay`, {
      details: { jobId: job.id, idempotencyKey: job.idempotency_key },
    });
  }
}

/**
 * Dead job of a dead-lettered run -> ready now with `attempt = 0`; its stage record `pending`;
 * its run `running`. A run that failed permanently or was compensated is not replayed.
 */
async function replayJob(ctx: PgContext, jobId: string): Promise<Job> {
  const restarted = await inTransaction(ctx.pool, async (client) => {
    const [job] = await queryRows<JobRow>(client, ctx.sql.operator.lockJob, [jobId]);
    if (!job) throw new NotFoundError('job', jobId);
    await checkReplayable(ctx, client, job);
    return restartJob(ctx, client, job.id, true);
  });
  ctx.wake([restarted.job.queue]);
  return jobFromRow(restarted.job);
}

/** Pauses (no claims) or resumes a queue; the queue need not exist before. */
async function setQueuePaused(ctx: PgContext, queue: string, paused: boolean): Promise<void> {
  await queryRows(ctx.pool, ctx.sql.operator.upsertQueue, [ctx.now(), queue, paused, ctx.channel]);
  if (!paused) ctx.wake([queue]);
}

/**
 * Removes every ready job of the queue (leased ones finish; jobs being claimed this instant
 * count as leased) and cancels their runs with reason `queue drained`. Returns how many jobs of
 * the queue were removed.
 */
async function drainQueue(ctx: PgContext, queue: string): Promise<number> {
  return inTransaction(ctx.pool, async (client) => {
    const ready = await queryRows<{ id: string; run_id: string }>(client, ctx.sql.operator.lockReadyJobsOfQueue, [queue]);
    const locked = await lockRuns(ctx, client, [...new Set(ready.map((job) => job.run_id))]);
    // Every run with a live job has not ended; the check keeps an impossible case harmless.
    const live = [...locked.values()].filter((run) => !isTerminal(run.status)).map((run) => run.id);
    await endLockedRuns(ctx, client, live, 'cancelled', cancelledError('queue drained'));
    return ready.length;
  });
}

/** Operator actions over the context's pool. */
export function createOperatorPort(ctx: PgContext): OperatorPort {
  return ctx.port<OperatorPort>({
    cancelRun: (runId, reason) => cancelRun(ctx, runId, reason),
    resumeRun: (runId) => resumeRun(ctx, runId),
    replayJob: (jobId) => replayJob(ctx, jobId),
    setQueuePaused: (queue, paused) => setQueuePaused(ctx, queue, paused),
    drainQueue: (queue) => drainQueue(ctx, queue),
  });
}
