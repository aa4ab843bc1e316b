/**
 * The claim statement: `claimJobs` is this ONE statement (autocommit: one transaction, one round
 * trip) however many queues it serves. The work is the `claim_jobs` function (migration 0004,
 * where its inputs, outputs and invariants are written down): inside it the statement is
 * planned once per connection, not on every call.
 *
 * In:  $1 now (NULL: the database clock), $2 queues text[], $3 worker ids text[], $4 limits int[],
 *      $5 lease ms bigint[] — one element per request, in request order (limits >= 1) — and
 *      $6 lease tokens text[], at least as many as the limits add up to.
 * Out: one row per claimed job, in request order then claim order: every `jobs` column after the
 *      lease, `pos` (1-based place in the result), `picked_state` (`leased` = an expired lease
 *      taken over, a redelivery), `run` (the run row as JSON, before the claim), `run_started_at`
 *      (non-NULL when this claim started the run: `run` is then `running`, updated at that time),
 *      `outputs` (JSON object of the run's succeeded stages' outputs, or NULL), `ledger_hit` and
 *      `ledger_output`.
 */
import { statement, type Statement } from '../database.ts';

/** The claim statement for schema `s` (quoted). */
export function claimJobs(s: string): Statement {
  return statement(
    'claim_jobs',
    `SELECT (c.job).*, c.pos, c.picked_state, c.run, c.run_started_at, c.outputs, c.ledger_hit, c.ledger_output
     FROM ${s}.claim_jobs($1::bigint, $2::text[], $3::text[], $4::int[], $5::bigint[], $6::text[]) AS c
     ORDER BY c.pos`,
  );
}
