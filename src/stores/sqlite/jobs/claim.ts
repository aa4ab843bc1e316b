/**
 * `claimJobs`: the hot path. One BEGIN IMMEDIATE transaction (opened by the caller) reads the paused queues once, picks
 * up to `limit` claimable jobs of each requested queue in claim order (fair across tenants: a
 * skip-scan for the tenants with ready jobs, then one indexed query per tenant and one for
 * redeliveries; see pickQueue),
 * takes one block of fences for all of them, leases each job, and loads the runs, succeeded
 * outputs and ledger hits of the whole batch with one query each (no per-job reads).
 */
import type { JsonValue, Run } from '../../../core/model.ts';
import type { ClaimedJob, ClaimRequest } from '../../../core/ports/jobs.ts';
import type { SqliteContext } from '../context.ts';
import { fromJson, jobFromRow, RAW_JOB, RAW_RUN, runFromRow, type JobRow, type RunRow } from '../rows.ts';
import { inClaimOrder, type ClaimOrderKey } from '../../shared/claim-order.ts';
import { MAX_PICK_LIMIT } from '../sql/jobs.ts';

/** A job chosen for a claim (its row as read), with the request it answers. */
interface PickedJob {
  row: JobRow;
  request: ClaimRequest;
}

/** The order fields of a job row (see shared/claim-order.ts). */
const orderKey = (row: JobRow): ClaimOrderKey => ({ priority: row.priority, availableAt: row.available_at, id: row.id, tenant: row.tenant });

/**
 * The first `limit` claimable jobs of `queue` in claim order (see `JobsPort.claim`): the heads of
 * each tenant with ready jobs (at most `limit` each: a job past its tenant's first `limit` cannot
 * be among the first `limit` overall) plus the retries the cap lets in, ordered in TypeScript.
 * Without a cap those retries are every expired lease; with one, the first `budget` retries in
 * plain order, and the heads are first attempts only.
 */
function pickQueue(ctx: SqliteContext, queue: string, limit: number, cap: number | undefined, now: number): JobRow[] {
  const sql = ctx.sql();
  const budget = cap === undefined ? limit : Math.min(limit, Math.max(0, cap - (sql.countRetriesRunning.get({ queue, now })?.n ?? 0)));
  const tenants = sql.selectReadyTenants.all({ queue });
  const rows: JobRow[] = [];
  const add = (values: readonly unknown[][]): void => {
    for (const v of values) rows.push(RAW_JOB.fromValues(v));
  };
  if (cap === undefined) {
    // The expired leases come with the first tenant's heads (one statement in the usual case).
    const [first, ...others] = tenants;
    add(first === undefined ? sql.pickExpired(limit).all({ queue, now }) : sql.pickTenantReadyWithExpired(limit).all({ queue, tenant: first.tenant, now }));
    for (const { tenant } of others) add(sql.pickTenantReady(limit).all({ queue, tenant, now }));
  } else {
    for (const { tenant } of tenants) add(sql.pickTenantFirstAttempts(limit).all({ queue, tenant, now }));
    if (budget > 0) add(sql.pickRetries(budget).all({ queue, now }));
  }
  return inClaimOrder(rows, orderKey).slice(0, limit);
}

/**
 * Picks the claimable jobs of every request; paused queues yield none. Requests naming the same
 * queue share one pick, dealt in request order (the smallest cap of theirs applies). Nothing is
 * leased yet. Results in request order.
 */
function pickAll(ctx: SqliteContext, requests: readonly ClaimRequest[], now: number): PickedJob[] {
  const wanted = requests.filter((r) => r.limit >= 1);
  if (wanted.length === 0) return [];
  const paused = new Set(ctx.sql().selectPausedQueues.all().map((row) => row.name));
  const dealt = new Map<ClaimRequest, JobRow[]>();
  for (const queue of new Set(wanted.map((r) => r.queue))) {
    if (paused.has(queue)) continue;
    const mine = wanted.filter((r) => r.queue === queue);
    const limits = mine.map((r) => Math.min(Math.floor(r.limit), MAX_PICK_LIMIT));
    const caps = mine.flatMap((r) => (r.maxRetriesRunning === undefined ? [] : [r.maxRetriesRunning]));
    const total = Math.min(limits.reduce((a, b) => a + b, 0), MAX_PICK_LIMIT);
    const rows = pickQueue(ctx, queue, total, caps.length > 0 ? Math.min(...caps) : undefined, now);
    let at = 0;
    mine.forEach((request, i) => {
      dealt.set(request, rows.slice(at, at + (limits[i] ?? 0)));
      at += limits[i] ?? 0;
    });
  }
  return wanted.flatMap((request) => (dealt.get(request) ?? []).map((row) => ({ row, request })));
}

/**
 * Leases the picked jobs in order, each with its own token and the next fence of one block, and
 * marks queued runs running (patching `runs` to match). Each lease is computed here from the
 * picked row and written as computed, so no row is read back. Stage records are not written: a
 * leased stage job's record reads running from the job (stage_records_live, migration 0015).
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
      now,
    };
    sql.leaseJob.run(lease.attempt, lease.redeliveries, lease.owner, lease.token, lease.fence, lease.lease_until, lease.lease_ms, now, lease.id);
    markRunStarted(ctx, row, runs, now);
    const { owner, token, now: claimedAt, ...fields } = lease;
    return { ...row, ...fields, state: 'leased', lease_owner: owner, lease_token: token, started_at: row.started_at ?? claimedAt };
  });
}

/** A queued run becomes running (once). */
function markRunStarted(ctx: SqliteContext, job: JobRow, runs: Map<string, RunRow>, now: number): void {
  const run = runs.get(job.run_id);
  // Only a run's first claim finds it queued: later stages skip the write.
  if (run?.status === 'queued') {
    ctx.sql().markRunRunning.run(now, job.run_id);
    runs.set(job.run_id, { ...run, status: 'running', updated_at: now });
  }
}

/** Outputs of the succeeded stages of every run in the batch, by run id then stage. */
function outputsByRun(ctx: SqliteContext, runIdsJson: string): Map<string, Record<string, JsonValue>> {
  const byRun = new Map<string, Record<string, JsonValue>>();
  for (const [runId, stage, output] of ctx.sql().selectSucceededOutputs.all(runIdsJson)) {
    let outputs = byRun.get(runId);
    if (!outputs) byRun.set(runId, (outputs = {}));
    outputs[stage] = fromJson(output);
  }
  return byRun;
}

/** Ledger outputs (as JSON text) of the jobs whose key already completed, by key. */
function ledgerHits(ctx: SqliteContext, jobs: readonly JobRow[]): Map<string, string> {
  const pairs = JSON.stringify(jobs.map((j) => [j.run_id, j.idempotency_key]));
  return new Map(ctx.sql().selectLedgerOutputs.all(pairs).map((row) => [row.key, row.output]));
}

/**
 * The run of a claimed job as read (sql/run-columns.ts) from its stored row: a stage job being
 * claimed is its run's only live stage job, so when it was enqueued at or after the row's last
 * write (a plain advance since) it gives the current stage; its enqueue is the last change then.
 */
function asReadWith(run: RunRow, job: JobRow): RunRow {
  const advanced = run.current_stage !== null && job.kind === 'stage' && job.enqueued_at >= run.updated_at;
  return { ...run, current_stage: advanced ? job.stage : run.current_stage, updated_at: Math.max(run.updated_at, job.enqueued_at) };
}

/** Claims from every requested queue in one transaction; results grouped in request order. */
export function claimJobs(ctx: SqliteContext, requests: readonly ClaimRequest[]): ClaimedJob[] {
  const now = ctx.clock.now();
  const picks = pickAll(ctx, requests, now);
  if (picks.length === 0) return [];
  const runIdsJson = JSON.stringify([...new Set(picks.map((p) => p.row.run_id))]);
  const runRows = new Map<string, RunRow>();
  for (const values of ctx.sql().selectRunsByIds.all(runIdsJson)) {
    const row = RAW_RUN.fromValues(values);
    runRows.set(row.id, row);
  }
  for (const { row: job } of picks) {
    const run = runRows.get(job.run_id);
    if (run) runRows.set(job.run_id, asReadWith(run, job));
  }
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
