/**
 * The claim statement: `claimJobs` is this ONE statement (autocommit: one transaction, one round
 * trip) however many queues it serves.
 *
 * In:  $1 now (NULL: the database clock), $2 queues text[], $3 worker ids text[], $4 limits int[],
 *      $5 lease ms bigint[] — one element per request, in request order (limits >= 1) — and
 *      $6 lease tokens text[], at least as many as the limits add up to.
 * Out: one row per claimed job, in request order then claim order: every `jobs` column after the
 *      lease, `pos` (1-based place in the result), `picked_state` (`leased` = an expired lease
 *      taken over, a redelivery), `run` (the run row as JSON, after the claim), `outputs` (JSON
 *      object of the run's succeeded stages' outputs, or NULL), `ledger_hit` and `ledger_output`.
 * Invariants:
 *   * No job is handed out twice: candidates are row-locked with FOR UPDATE SKIP LOCKED (a
 *     concurrent claimer skips them instead of waiting) and rechecked on their latest version.
 *   * A queue named twice is picked once with the summed limit; its jobs are dealt to its
 *     requests in request order (`skip` = the limits of its earlier requests).
 *   * Paused queues yield nothing. Each pick stops at its limit, so the cost does not grow with
 *     queue depth: ready jobs come off jobs_ready in claim order, expired leases off
 *     jobs_lease_expiry (usually empty).
 *   * Locks go job first, then stage record and run, like every other operation.
 */
import { nowFrom, statement, type Statement } from '../database.ts';

/** The claim statement for schema `s` (quoted). */
export function claimJobs(s: string): Statement {
  const now = nowFrom(1);
  return statement(
    'claim_jobs',
    `
WITH req AS (
  SELECT r.queue, r.worker_id, r.lim, r.lease_ms, r.ord,
    coalesce(sum(r.lim) OVER (PARTITION BY r.queue ORDER BY r.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS skip
  FROM unnest($2::text[], $3::text[], $4::int[], $5::bigint[]) WITH ORDINALITY AS r (queue, worker_id, lim, lease_ms, ord)
),
demand AS (
  SELECT req.queue, sum(req.lim)::int AS total FROM req
  WHERE NOT EXISTS (SELECT 1 FROM ${s}.queues q WHERE q.name = req.queue AND q.paused)
  GROUP BY req.queue
),
ready AS (
  SELECT d.queue, j.id, j.state, j.priority, j.available_at
  FROM demand d CROSS JOIN LATERAL (
    SELECT id, state, priority, available_at FROM ${s}.jobs
    WHERE queue = d.queue AND state = 'ready' AND available_at <= ${now}
    ORDER BY priority, available_at, id LIMIT d.total
    FOR UPDATE SKIP LOCKED
  ) j
),
expired AS (
  SELECT d.queue, j.id, j.state, j.priority, j.available_at
  FROM demand d CROSS JOIN LATERAL (
    SELECT id, state, priority, available_at FROM ${s}.jobs
    WHERE state = 'leased' AND lease_until <= ${now} AND queue = d.queue
    ORDER BY priority, available_at, id LIMIT d.total
    FOR UPDATE SKIP LOCKED
  ) j
),
picked AS (
  SELECT c.queue, c.id, c.state, row_number() OVER (PARTITION BY c.queue ORDER BY c.priority, c.available_at, c.id) AS rn
  FROM (SELECT * FROM ready UNION ALL SELECT * FROM expired) c
),
assigned AS (
  SELECT p.id, p.state AS picked_state, r.worker_id, r.lease_ms, row_number() OVER (ORDER BY r.ord, p.rn) AS pos
  FROM picked p JOIN req r ON r.queue = p.queue AND p.rn > r.skip AND p.rn <= r.skip + r.lim
),
leased AS (
  UPDATE ${s}.jobs j SET state = 'leased', attempt = j.attempt + 1,
    redeliveries = j.redeliveries + CASE WHEN a.picked_state = 'leased' THEN 1 ELSE 0 END,
    lease_owner = a.worker_id, lease_token = ($6::text[])[a.pos], fence = nextval('${s}.fence_seq'),
    lease_until = ${now} + a.lease_ms, lease_ms = a.lease_ms
  FROM assigned a WHERE j.id = a.id
  RETURNING j.*, a.pos, a.picked_state
),
staged AS (
  -- A rollback job compensates a stage that succeeded: that record's status must stay as is.
  UPDATE ${s}.stage_records st SET status = 'running', attempts = st.attempts + 1, lease_owner = l.lease_owner,
    lease_until = l.lease_until, started_at = coalesce(st.started_at, ${now})
  FROM leased l WHERE l.kind = 'stage' AND st.run_id = l.run_id AND st.stage = l.stage
),
started AS (
  -- Only a run's first claim finds it queued: later stages skip the write.
  UPDATE ${s}.runs r SET status = 'running', updated_at = ${now}
  WHERE r.id IN (SELECT run_id FROM leased) AND r.status = 'queued'
  RETURNING r.*
),
run_rows AS MATERIALIZED (
  -- Materialized: computed once, not once per claimed job.
  SELECT * FROM started
  UNION ALL
  SELECT * FROM ${s}.runs r WHERE r.id IN (SELECT run_id FROM leased) AND r.id NOT IN (SELECT id FROM started)
),
outputs AS (
  -- Read before this statement's own updates: the stage a claimed job runs is not an output
  -- (it is running now), even when a duplicate of it succeeded before.
  SELECT st.run_id, json_object_agg(st.stage, st.output) AS outputs
  FROM ${s}.stage_records st
  WHERE st.run_id IN (SELECT run_id FROM leased) AND st.status = 'succeeded'
    AND NOT EXISTS (SELECT 1 FROM leased l WHERE l.kind = 'stage' AND l.run_id = st.run_id AND l.stage = st.stage)
  GROUP BY st.run_id
)
SELECT l.*, row_to_json(rr) AS run, o.outputs, lg.run_id IS NOT NULL AS ledger_hit, lg.output AS ledger_output
FROM leased l
JOIN run_rows rr ON rr.id = l.run_id
LEFT JOIN outputs o ON o.run_id = l.run_id
LEFT JOIN ${s}.ledger lg ON lg.run_id = l.run_id AND lg.key = l.idempotency_key
ORDER BY l.pos`,
  );
}
