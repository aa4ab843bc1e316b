/**
 * The `retention` sub-port of the PostgreSQL store: each prune is ONE statement
 * (sql/retention.ts), one round trip, that picks at most `limit` expired runs, oldest finished first, and deletes
 * them with their child rows; runs another transaction holds are left for the next batch.
 */
import type { PruneCounts, RetentionPolicy, RetentionPort } from '../../core/ports/retention.ts';
import { runPeriods } from '../shared/retention-periods.ts';
import type { PgContext } from './context.ts';
import { queryRows } from './database.ts';

/** A row of counts, as both statements answer. */
interface CountsRow {
  runs: number;
  stage_records: number;
  ledger_entries: number;
  jobs: number;
  attempts: number;
  requests: number;
}

function countsFromRow(row: CountsRow | undefined): PruneCounts {
  if (!row) throw new Error('retention statement returned no row');
  return {
    runs: row.runs,
    stageRecords: row.stage_records,
    ledgerEntries: row.ledger_entries,
    jobs: row.jobs,
    attempts: row.attempts,
    requests: row.requests,
  };
}

/** The statement parameters of a policy: statuses, their periods, the request period. */
function periods(policy: RetentionPolicy): [statuses: string[], periods: number[], requestsMs: number | null] {
  const pairs = runPeriods(policy);
  return [pairs.map((p) => p.status), pairs.map((p) => p.periodMs), policy.requestsMs];
}

/** Retention over the context's pool. */
export function createRetentionPort(ctx: PgContext): RetentionPort {
  return ctx.port<RetentionPort>({
    prune: async (policy, limit) => {
      const [statuses, ms, requestsMs] = periods(policy);
      const [row] = await queryRows<CountsRow>(ctx.pool, ctx.sql.retention.pruneExpired, [statuses, ms, limit, requestsMs, ctx.now()]);
      return countsFromRow(row);
    },
    count: async (policy) => {
      const [statuses, ms, requestsMs] = periods(policy);
      const [row] = await queryRows<CountsRow>(ctx.pool, ctx.sql.retention.countExpired, [statuses, ms, requestsMs, ctx.now()]);
      return countsFromRow(row);
    },
  });
}
