-- routines/jobs-claim.sql: claiming jobs from any number of queues in one statement.
--
-- Re-applied by migrate() (migrate.ts) whenever this file's sha256 changes; created with
-- `SET search_path FROM CURRENT` (the store's schema, then pg_temp; see routines/cache.sql) and
-- `SET plan_cache_mode = force_generic_plan`: planning the claim costs about as much as running
-- it, and a custom plan is never cheaper here (every pick walks an index up to a LIMIT), so it
-- is planned once per connection.
--
-- claim_jobs(p_now, p_queues, p_workers, p_limits, p_lease_ms, p_tokens)
--   In:  p_now epoch ms (NULL: the database clock); one element per request, in request order
--        (limits >= 1): queue, worker id, limit, lease ms; p_tokens: lease tokens, at least as
--        many as the limits add up to.
--   Out: one row per claimed job, in request order then claim order: `job` (the jobs row after
--        the lease), `pos` (1-based place), `picked_state` (`leased` = an expired lease taken
--        over, a redelivery), `run` (the run row as JSON, as the statement's snapshot saw it),
--        `run_started_at` (non-NULL when this claim started the run: `run` is then `running`,
--        updated at that time), `outputs` (JSON object of the run's succeeded stages' outputs,
--        or NULL), `ledger_hit`, `ledger_output`.
--   Invariants:
--     * No job is handed out twice: candidates are row-locked with FOR UPDATE SKIP LOCKED (a
--       concurrent claimer skips them instead of waiting) and rechecked on their latest version.
--     * Fences come from fence_seq: strictly increasing across every process.
--     * A queue named twice is picked once with the summed limit; its jobs are dealt to its
--       requests in request order (`skip` = the limits of its earlier requests).
--     * Paused queues yield nothing. Each pick stops at its limit, so the cost does not grow with
--       queue depth: ready jobs come off jobs_ready in claim order, expired leases off
--       jobs_lease_expiry (usually empty).
--     * Locks go job first, then stage record and run, like every other operation.
--     * `run` is read from the snapshot, not from the runs update: a CTE joined back to the
--       leased rows is planned as a nested loop (the planner cannot size either side),
--       quadratic in the batch size. The job's row lock keeps the run from changing meanwhile
--       (every writer of a run locks its live job first).

CREATE OR REPLACE FUNCTION claim_jobs(p_now bigint, p_queues text[], p_workers text[], p_limits integer[], p_lease_ms bigint[],
                           p_tokens text[])
RETURNS TABLE (job jobs, pos bigint, picked_state text, run json, run_started_at bigint, outputs json,
               ledger_hit boolean, ledger_output json)
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
  v_now bigint := coalesce(p_now, floor(extract(epoch FROM now()) * 1000)::bigint);
BEGIN
  RETURN QUERY
  WITH req AS (
    SELECT r.queue, r.worker_id, r.lim, r.lease_ms, r.ord,
      coalesce(sum(r.lim) OVER (PARTITION BY r.queue ORDER BY r.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS skip
    FROM unnest(p_queues, p_workers, p_limits, p_lease_ms) WITH ORDINALITY AS r (queue, worker_id, lim, lease_ms, ord)
  ),
  demand AS (
    SELECT req.queue, sum(req.lim)::int AS total FROM req
    WHERE NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = req.queue AND q.paused)
    GROUP BY req.queue
  ),
  ready AS (
    SELECT d.queue, j.id, j.state, j.priority, j.available_at
    FROM demand d CROSS JOIN LATERAL (
      SELECT id, state, priority, available_at FROM jobs
      WHERE queue = d.queue AND state = 'ready' AND available_at <= v_now
      ORDER BY priority, available_at, id LIMIT d.total
      FOR UPDATE SKIP LOCKED
    ) j
  ),
  expired AS (
    SELECT d.queue, j.id, j.state, j.priority, j.available_at
    FROM demand d CROSS JOIN LATERAL (
      SELECT id, state, priority, available_at FROM jobs
      WHERE state = 'leased' AND lease_until <= v_now AND queue = d.queue
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
    UPDATE jobs j SET state = 'leased', attempt = j.attempt + 1,
      redeliveries = j.redeliveries + CASE WHEN a.picked_state = 'leased' THEN 1 ELSE 0 END,
      lease_owner = a.worker_id, lease_token = p_tokens[a.pos], fence = nextval('fence_seq'),
      lease_until = v_now + a.lease_ms, lease_ms = a.lease_ms
    FROM assigned a WHERE j.id = a.id
    RETURNING j AS job, j.run_id, j.stage, j.kind, j.idempotency_key, j.lease_owner, j.lease_until, a.pos, a.picked_state
  ),
  staged AS (
    -- A rollback job compensates a stage that succeeded: that record's status must stay as is.
    UPDATE stage_records st SET status = 'running', attempts = st.attempts + 1, lease_owner = l.lease_owner,
      lease_until = l.lease_until, started_at = coalesce(st.started_at, v_now)
    FROM leased l WHERE l.kind = 'stage' AND st.run_id = l.run_id AND st.stage = l.stage
  ),
  started AS (
    -- Only a run's first claim finds it queued: later stages skip the write.
    UPDATE runs r SET status = 'running', updated_at = v_now
    WHERE r.id IN (SELECT run_id FROM leased) AND r.status = 'queued'
  )
  SELECT l.job, l.pos, l.picked_state, row_to_json(r), CASE WHEN r.status = 'queued' THEN v_now END,
    -- Read before this statement's own updates: the stage a claimed job runs is not an output
    -- (it is running now), even when a duplicate of it succeeded before.
    (SELECT json_object_agg(st.stage, st.output) FROM stage_records st
     WHERE st.run_id = l.run_id AND st.status = 'succeeded' AND NOT (l.kind = 'stage' AND st.stage = l.stage)),
    lg.run_id IS NOT NULL, lg.output
  FROM leased l
  JOIN runs r ON r.id = l.run_id
  LEFT JOIN ledger lg ON lg.run_id = l.run_id AND lg.key = l.idempotency_key
  ORDER BY l.pos;
END
$$;
