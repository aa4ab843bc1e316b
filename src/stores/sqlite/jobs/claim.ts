/**
 * `claimJobs`: the hot path. One BEGIN IMMEDIATE transaction (opened by the caller) reads the paused queues once, picks
 * up to `limit` claimable jobs of each requested queue in claim order (one indexed query each),
 * takes one block of fences for all of them, leases each job, and loads the runs, succeeded
 * outputs and ledger hits of the whole batch with one query each (no per-job reads).
 */
import type { JsonValue, Run } from '../../../core/model.ts';
import type { ClaimedJob, ClaimRequest } from '../../../core/ports/jobs.ts';
import type { SqliteContext } from '../context.ts';
import { fromJson, jobFromRow, jobRowFromValues, runFromRow, type JobRow, type RunRow } from '../rows.ts';
import { MAX_PICK_LIMIT, type LeaseJobParams } from '../sql/jobs.ts';

/** A job chosen for a claim (its row as read), with the request it answers. */
interface PickedJob {
  row: JobRow;
  request: ClaimRequest;
}

/**
 * Picks the claimable jobs of every request, in request order; paused queues yield none. Nothing
 * is leased yet, so a queue named again looks past the jobs its earlier requests picked.
 */
function pickAll(ctx: SqliteContext, requests: readonly ClaimRequest[], now: number): PickedJob[] {
  const sql = ctx.sql();
  const wanted = requests.filter((r) => r.limit >= 1);
  if (wanted.length === 0) return [];
  const paused = new Set(sql.selectPausedQueues.all().map((row) => row.name));
  const picks: PickedJob[] = [];
  const picked = new Set<string>();
  const pickedPerQueue = new Map<string, number>();
  for (const request of wanted) {
    if (paused.has(request.queue)) continue;
    const earlier = pickedPerQueue.get(request.queue) ?? 0;
    const limit = Math.min(Math.floor(request.limit), MAX_PICK_LIMIT);
    const rows = sql.pickClaimable(Math.min(limit + earlier, MAX_PICK_LIMIT)).all({ queue: request.queue, now });
    let taken = 0;
    for (const values of rows) {
      if (taken === limit) break;
      const row = jobRowFromValues(values);
      if (picked.has(row.id)) continue;
      picked.add(row.id);
      picks.push({ row, request });
      taken += 1;
    }
    pickedPerQueue.set(request.queue, earlier + taken);
  }
  return picks;
}

/**
 * Leases the picked jobs in order, each with its own token and the next fence of one block, and
 * marks their stage records running and queued runs running (patching `runs` to match). Each
 * lease is computed here from the picked row and written as computed, so no row is read back.
 */
function leasePicked(ctx: SqliteContext, picks: readonly PickedJob[], runs: Map<string, RunRow>, now: number): JobRow[] {
  const sql = ctx.sql();
  const counter = sql.takeFences.get(picks.length);
  if (!counter) throw new Error('fence_counter row is missing');
  const firstFence = counter.value - picks.length + 1;
  return picks.map(({ row, request }, i): JobRow => {
    const lease = {
      id: row.id,
      attempt: row.attempt + 1,
      // Taking over an expired lease is a redelivery.
      redeliveries: row.redeliveries + (row.state === 'leased' ? 1 : 0),
      owner: request.workerId,
      token: ctx.ids.token(),
      fence: firstFence + i,
      lease_until: now + request.leaseMs,
      lease_ms: request.leaseMs,
    };
    sql.leaseJob.run(lease);
    markClaimed(ctx, row, lease, runs, now);
    const { owner, token, ...fields } = lease;
    return { ...row, ...fields, state: 'leased', lease_owner: owner, lease_token: token };
  });
}

/** A claimed stage job's record becomes running; a queued run becomes running (once). */
function markClaimed(ctx: SqliteContext, job: JobRow, lease: LeaseJobParams, runs: Map<string, RunRow>, now: number): void {
  const sql = ctx.sql();
  // A rollback job compensates a stage that succeeded: that record's status must stay as is.
  if (job.kind === 'stage') {
    sql.claimStage.run({ run_id: job.run_id, stage: job.stage, owner: lease.owner, lease_until: lease.lease_until, now });
  }
  const run = runs.get(job.run_id);
  // Only a run's first claim finds it queued: later stages skip the write.
  if (run?.status === 'queued') {
    sql.markRunRunning.run(now, job.run_id);
    runs.set(job.run_id, { ...run, status: 'running', updated_at: now });
  }
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

/** Ledger outputs (as JSON text) of the jobs whose key already completed, by key. */
function ledgerHits(ctx: SqliteContext, jobs: readonly JobRow[]): Map<string, string> {
  const pairs = JSON.stringify(jobs.map((j) => [j.run_id, j.idempotency_key]));
  return new Map(ctx.sql().selectLedgerOutputs.all(pairs).map((row) => [row.key, row.output]));
}

/** Claims from every requested queue in one transaction; results grouped in request order. */
export function claimJobs(ctx: SqliteContext, requests: readonly ClaimRequest[]): ClaimedJob[] {
  const now = ctx.clock.now();
  const picks = pickAll(ctx, requests, now);
  if (picks.length === 0) return [];
  const runIdsJson = JSON.stringify([...new Set(picks.map((p) => p.row.run_id))]);
  const runRows = new Map(ctx.sql().selectRunsByIds.all(runIdsJson).map((row) => [row.id, row]));
  const jobs = leasePicked(ctx, picks, runRows, now);
  const outputs = outputsByRun(ctx, runIdsJson);
  const ledger = ledgerHits(ctx, jobs);
  // One Run per run of the batch: its input is parsed once, not once per job.
  const runs = new Map<string, Run>();

  return jobs.map((row, i): ClaimedJob => {
    let run = runs.get(row.run_id);
    if (!run) {
      const runRow = runRows.get(row.run_id);
      if (!runRow) throw new Error(`run ${row.run_id} of job ${row.id} is missing`);
      runs.set(row.run_id, (run = runFromRow(runRow)));
    }
    const ledgerOutput = ledger.get(row.idempotency_key);
    return {
      job: jobFromRow(row),
      run,
      // Each claimed job gets its own copy: handlers of one batch must not share mutable outputs.
      outputs: { ...(outputs.get(row.run_id) ?? {}) },
      ...(ledgerOutput === undefined ? {} : { ledgerOutput: fromJson(ledgerOutput) }),
      exhausted: row.attempt > row.max_attempts,
      // The picked row was still leased: this claim took over an expired lease.
      redelivered: picks[i]?.row.state === 'leased',
    };
  });
}
