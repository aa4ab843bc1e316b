/**
 * `claimJobs`: the hot path. One BEGIN IMMEDIATE transaction picks up to `limit` claimable jobs
 * in claim order with one indexed query, takes a block of fences with one counter update, leases
 * each job, and then loads the runs, succeeded outputs and ledger hits of the whole batch with
 * one query each (no per-job reads).
 */
import type { JsonValue } from '../../core/model.ts';
import type { ClaimedJob, ClaimRequest } from '../../core/ports.ts';
import type { SqliteContext } from './context.ts';
import { fromJson, jobFromRow, runFromRow, type JobRow } from './rows.ts';

/** Leases the picked jobs in order, each with its own token and the next fence of the block. */
function leasePicked(ctx: SqliteContext, ids: readonly string[], request: ClaimRequest, now: number): JobRow[] {
  const sql = ctx.sql();
  const counter = sql.takeFences.get(ids.length);
  if (!counter) throw new Error('fence_counter row is missing');
  const firstFence = counter.value - ids.length + 1;
  const leaseUntil = now + request.leaseMs;
  return ids.map((id, i) => {
    const job = sql.leaseJob.get({
      id,
      owner: request.workerId,
      token: ctx.ids.token(),
      fence: firstFence + i,
      lease_until: leaseUntil,
      lease_ms: request.leaseMs,
    });
    if (!job) throw new Error(`picked job ${id} vanished inside the claim transaction`);
    // A rollback job compensates a stage that succeeded: that record's status must stay as is.
    if (job.kind === 'stage') {
      sql.claimStage.run({ run_id: job.run_id, stage: job.stage, owner: request.workerId, lease_until: leaseUntil, now });
    }
    sql.markRunRunning.run(now, job.run_id);
    return job;
  });
}

/** Outputs of the succeeded stages of every run in the batch, by run id then stage. */
function outputsByRun(ctx: SqliteContext, runIdsJson: string): Map<string, Record<string, JsonValue>> {
  const byRun = new Map<string, Record<string, JsonValue>>();
  for (const row of ctx.sql().selectSucceededOutputs.all(runIdsJson)) {
    let outputs = byRun.get(row.run_id);
    if (!outputs) byRun.set(row.run_id, (outputs = {}));
    outputs[row.stage] = fromJson(row.output);
  }
  return byRun;
}

/** Claims up to `limit` due jobs of one queue (none from a paused queue). */
export function claimJobs(ctx: SqliteContext, request: ClaimRequest): ClaimedJob[] {
  if (request.limit <= 0) return [];
  const sql = ctx.sql();
  if (sql.selectQueuePaused.get(request.queue)?.paused === 1) return [];
  const now = ctx.clock.now();
  const picked = sql.pickClaimable.all({ queue: request.queue, now, limit: request.limit });
  if (picked.length === 0) return [];

  const jobs = leasePicked(
    ctx,
    picked.map((p) => p.id),
    request,
    now,
  );
  const runIdsJson = JSON.stringify([...new Set(jobs.map((j) => j.run_id))]);
  const runs = new Map(sql.selectRunsByIds.all(runIdsJson).map((row) => [row.id, runFromRow(row)]));
  const outputs = outputsByRun(ctx, runIdsJson);
  const ledger = new Map(
    sql.selectLedgerOutputs.all(JSON.stringify(jobs.map((j) => j.idempotency_key))).map((row) => [row.key, row.output]),
  );

  return jobs.map((row): ClaimedJob => {
    const run = runs.get(row.run_id);
    if (!run) throw new Error(`run ${row.run_id} of job ${row.id} is missing`);
    const ledgerOutput = ledger.get(row.idempotency_key);
    return {
      job: jobFromRow(row),
      run,
      // Each claimed job gets its own copy: handlers of one batch must not share mutable outputs.
      outputs: { ...(outputs.get(row.run_id) ?? {}) },
      ...(ledgerOutput === undefined ? {} : { ledgerOutput: fromJson(ledgerOutput) }),
      exhausted: row.attempt > row.max_attempts,
    };
  });
}
