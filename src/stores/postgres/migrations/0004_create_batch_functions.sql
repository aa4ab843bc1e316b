-- 0004_create_batch_functions: set-based claim and commit for large batches.
--
-- Creates: functions claim_jobs, complete_distinct_items, commit_batch.
-- Why: measured on the engine benchmark (PostgreSQL 15, fsync on),
--   * planning the claim statement cost about as much as running it (~0.6-0.9 ms per call, a
--     custom plan each time: the planner never found the generic plan cheaper). Inside a
--     function created with `SET plan_cache_mode = force_generic_plan` it is planned once per
--     connection; its plan does not depend on the parameter values (every pick walks an index
--     up to a LIMIT);
--   * commit_items (0003) runs about six statements per item. A batch of completions of
--     distinct runs (the common case) needs no item-by-item order: the same writes as set
--     statements cost a fraction of that.
-- Every function is created with `SET search_path FROM CURRENT` (see 0003).
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
--     * A queue named twice is picked once with the summed limit; its jobs are dealt to its
--       requests in request order (`skip` = the limits of its earlier requests).
--     * Paused queues yield nothing. Each pick stops at its limit, so the cost does not grow with
--       queue depth: ready jobs come off jobs_ready in claim order, expired leases off
--       jobs_lease_expiry (usually empty).
--     * Locks go job first, then stage record and run, like every other operation.
--     * `run` is read from the snapshot, not from the runs update: a CTE joined back to the
--       leased rows is planned as a nested loop (the planner cannot size either side),
--       quadratic in the batch size (80 ms for 500 jobs). The job's row lock keeps the run from
--       changing meanwhile (every writer of a run locks its live job first).
--
-- commit_batch(p_items json, p_now bigint, p_channel text, p_park_from text[])
--   In, Out: as commit_items (0003), same outcomes item by item.
--   When every item is a completion that enqueues no compensation, the job ids are distinct and
--   the jobs still present belong to distinct runs, no item can see another's writes: the batch
--   is applied by complete_distinct_items, set-wise. Anything else (failures, rollbacks, two
--   items of one run or one job) goes through commit_items, item by item, in order.
--
-- complete_distinct_items(p_items commit_item[], p_now, p_channel)
--   The set-wise completion: one fenced DELETE for all items, then ledger entries, stage
--   records, next jobs and runs as one statement each (all in one statement). Refused items
--   (stale token, expired lease, job gone) change nothing and get lease_lost or cancelled
--   exactly as complete_item (0003) would tell them.

CREATE FUNCTION claim_jobs(p_now bigint, p_queues text[], p_workers text[], p_limits integer[], p_lease_ms bigint[],
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

CREATE FUNCTION complete_distinct_items(p_items commit_item[], p_now bigint, p_channel text)
RETURNS TABLE (outcome text, run_status text, woken_queue text)
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH it AS (
    SELECT i.*, i.ordinality AS ord FROM unnest(p_items) WITH ORDINALITY AS i
  ),
  done AS (
    -- Fence check and delete in one statement, and first: a refused lease changes nothing.
    -- The fence is the token and the expiry: only a claim sets lease_token and every move out
    -- of `leased` clears it, so a matching token means `leased`. `state` is not tested on
    -- purpose: with it the planner may walk jobs_lease_expiry (all live leases, which it
    -- estimates at one row) and compare every lease with every item, quadratic in the batch;
    -- without it each item is one primary-key lookup.
    DELETE FROM jobs j USING it
    WHERE j.id = it.job_id AND j.lease_token = it.token AND j.lease_until > p_now
    RETURNING it.ord, j.run_id, j.pipeline, j.stage, j.kind, j.idempotency_key, j.tenant, j.trace_id,
      it.output, it.duration_ms, it.enqueue_id, it.enqueue_stage, it.enqueue_queue, it.enqueue_kind, it.enqueue_key,
      it.enqueue_max_attempts, it.enqueue_priority
  ),
  ledgered AS (
    -- The first outcome of a key wins. Runs are distinct: each count sees its run's entries.
    INSERT INTO ledger (run_id, key, seq, stage, kind, output, completed_at)
    SELECT d.run_id, d.idempotency_key, (SELECT count(*) FROM ledger x WHERE x.run_id = d.run_id), d.stage, d.kind,
      d.output::json, p_now
    FROM done d
    ON CONFLICT DO NOTHING
  ),
  staged AS (
    UPDATE stage_records st SET
      status = CASE WHEN d.kind = 'stage' THEN 'succeeded' ELSE st.status END,
      output = CASE WHEN d.kind = 'stage' THEN d.output::json ELSE st.output END,
      error = CASE WHEN d.kind = 'stage' THEN NULL ELSE st.error END,
      lease_owner = CASE WHEN d.kind = 'stage' THEN NULL ELSE st.lease_owner END,
      lease_until = CASE WHEN d.kind = 'stage' THEN NULL ELSE st.lease_until END,
      finished_at = CASE WHEN d.kind = 'stage' THEN p_now ELSE st.finished_at END,
      duration_ms = CASE WHEN d.kind = 'stage' THEN d.duration_ms ELSE st.duration_ms END,
      rollback_status = CASE WHEN d.kind = 'stage' THEN st.rollback_status ELSE 'succeeded' END
    FROM done d WHERE st.run_id = d.run_id AND st.stage = d.stage
  ),
  enqueued AS (
    -- A live job with the same key absorbs the next one (jobs_live_key), as in enqueue_job.
    INSERT INTO jobs (id, run_id, pipeline, stage, queue, kind, state, idempotency_key, max_attempts, priority,
                      available_at, enqueued_at, tenant, trace_id)
    SELECT d.enqueue_id, d.run_id, d.pipeline, d.enqueue_stage, d.enqueue_queue, d.enqueue_kind, 'ready',
      replace(d.enqueue_key, chr(1) || 'run' || chr(1), d.run_id), d.enqueue_max_attempts, d.enqueue_priority,
      p_now, p_now, d.tenant, d.trace_id
    FROM done d WHERE d.enqueue_id IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING id, queue
  ),
  notified AS (
    SELECT count(pg_notify(p_channel, q.queue)) AS n FROM (SELECT DISTINCT queue FROM enqueued) q
  ),
  moved AS (
    -- Without a next job the run ends (a compensation chain ends it failed); otherwise it moves
    -- to the next stage and keeps its status (runs_status is not rewritten on the happy path).
    UPDATE runs r SET
      status = CASE WHEN d.enqueue_id IS NOT NULL THEN r.status WHEN d.kind = 'stage' THEN 'succeeded' ELSE 'failed' END,
      current_stage = CASE WHEN d.enqueue_id IS NULL THEN NULL ELSE d.enqueue_stage END,
      finished_at = CASE WHEN d.enqueue_id IS NULL THEN p_now ELSE r.finished_at END,
      updated_at = p_now
    FROM done d WHERE r.id = d.run_id
    RETURNING d.ord, r.status
  )
  SELECT CASE
      WHEN m.ord IS NOT NULL THEN 'committed'
      WHEN lease_refusal(it.job_id) = 'cancelled' THEN 'cancelled'
      ELSE 'lease_lost'
    END,
    m.status,
    e.queue
  FROM it
  LEFT JOIN moved m ON m.ord = it.ord
  LEFT JOIN enqueued e ON e.id = it.enqueue_id AND m.ord IS NOT NULL
  -- notified is referenced so that its NOTIFYs are sent (a CTE no one reads is not run).
  CROSS JOIN notified
  ORDER BY it.ord;
END
$$;

CREATE FUNCTION commit_batch(p_items json, p_now bigint, p_channel text, p_park_from text[])
RETURNS TABLE (outcome text, run_status text, woken_queue text)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  v_items commit_item[];
  v_distinct boolean;
BEGIN
  v_items := ARRAY(
    SELECT r FROM json_array_elements(p_items) WITH ORDINALITY AS e (item, ord)
    CROSS JOIN LATERAL json_populate_record(NULL::commit_item, e.item) AS r
    ORDER BY e.ord
  );
  IF NOT EXISTS (SELECT 1 FROM unnest(v_items) i WHERE i.type <> 'complete' OR i.enqueue_kind = 'rollback') THEN
    -- A job's run never changes, so this needs no lock: the fenced DELETE decides the rest.
    SELECT count(DISTINCT i.job_id) = count(*)
       AND (SELECT count(DISTINCT j.run_id) = count(*) FROM jobs j WHERE j.id IN (SELECT x.job_id FROM unnest(v_items) x))
    INTO v_distinct
    FROM unnest(v_items) i;
    IF v_distinct THEN
      RETURN QUERY SELECT * FROM complete_distinct_items(v_items, p_now, p_channel);
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT * FROM commit_items(p_items, p_now, p_channel, p_park_from);
END
$$;
