/**
 * `jobs.claim`: the hot path, ONE statement for every requested queue (`claimJobs` of
 * sql/jobs.ts, which calls the `claim_jobs` function of routines/jobs-claim.sql). This side only
 * shapes the parameters (one lease token per job that may be claimed, drawn from the injected id
 * source) and the claimed rows.
 */
import type { JobState, JsonValue } from '../../../core/model.ts';
import type { ClaimedJob, ClaimRequest } from '../../../core/ports/jobs.ts';
import type { PgContext } from '../context.ts';
import { queryRows } from '../database.ts';
import { jobFromRow, runFromRow, type JobRow, type RunRow } from '../rows.ts';

/** Largest `limit` one request takes; a larger request gets at most this many jobs. */
export const MAX_CLAIM_LIMIT = 1000;

/** A row of the claim statement. */
interface ClaimRow extends JobRow {
  picked_state: JobState;
  run: RunRow;
  run_started_at: number | null;
  outputs: Record<string, JsonValue> | null;
  ledger_hit: boolean;
  ledger_output: JsonValue | null;
}

/** Claims from every requested queue in one transaction; results grouped in request order. */
export async function claimJobs(ctx: PgContext, requests: readonly ClaimRequest[]): Promise<ClaimedJob[]> {
  const wanted = requests
    .filter((r) => r.limit >= 1)
    .map((r) => ({ ...r, limit: Math.min(Math.floor(r.limit), MAX_CLAIM_LIMIT) }));
  if (wanted.length === 0) return [];
  const total = wanted.reduce((sum, r) => sum + r.limit, 0);
  const tokens = Array.from({ length: total }, () => ctx.ids.token());
  const rows = await queryRows<ClaimRow>(ctx.pool, ctx.sql.jobs.claimJobs, [
    ctx.now(),
    wanted.map((r) => r.queue),
    wanted.map((r) => r.workerId),
    wanted.map((r) => r.limit),
    // Leases are whole milliseconds (bigint columns).
    wanted.map((r) => Math.max(0, Math.round(r.leaseMs))),
    tokens,
    wanted.map((r) => (r.maxRetriesRunning === undefined ? null : Math.max(0, Math.floor(r.maxRetriesRunning)))),
  ]);
  return rows.map(
    (row): ClaimedJob => ({
      job: jobFromRow(row),
      // The statement returns the run as its snapshot saw it; a claim that started the run
      // applied exactly this on top (see routines/jobs-claim.sql).
      run: runFromRow(row.run_started_at === null ? row.run : { ...row.run, status: 'running', updated_at: row.run_started_at }),
      // Parsed per row: handlers of one batch never share a mutable outputs object.
      outputs: row.outputs ?? {},
      ...(row.ledger_hit ? { ledgerOutput: row.ledger_output } : {}),
      exhausted: row.attempt > row.max_attempts,
      // The picked row was still leased: this claim took over an expired lease.
      redelivered: row.picked_state === 'leased',
    }),
  );
}
