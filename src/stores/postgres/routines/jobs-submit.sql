-- routines/jobs-submit.sql: a submission batch without subjects as one call.
--
-- Re-applied by migrate() (migrate.ts) whenever this file's sha256 changes. A batch of N
-- submissions sent statement by statement costs N round trips (and a held connection); as set
-- statements inside one function it is one round trip, and the batch stays all or nothing even
-- though that one statement runs in autocommit: an error raised inside the function rolls the
-- whole statement back. submit_runs is created with `SET search_path FROM CURRENT` (see
-- routines/cache.sql), `SET plan_cache_mode = force_generic_plan` and `SET random_page_cost = 1.1`
-- (both explained in routines/jobs-claim.sql).
--
-- submit_firsts(p_reqs submit_request[])
--   Out: the requests in order (ord, 1-based) with, for each, the run id and input checksum of
--   the first request of the batch that uses the same key (its own for a request without a key).
--   Plain SQL that reads no table, so it needs no search_path and the planner inlines it.
--
-- submit_runs(p_requests json, p_now bigint, p_channel text)
--   In:  p_requests: a JSON array of submit_request objects, in batch order (none has a subject:
--        runs with a subject go through the store's per-request transaction, which takes the
--        subject's advisory lock); p_now: epoch ms (NULL: the database clock); p_channel: the
--        schema's NOTIFY channel.
--   Out: one row per request, in order: ord (1-based), created, run (the runs row as JSON: the
--        new run, or the run that already held the request's idempotency key).
--   Errors: SQLSTATE KL409 when a request's idempotency key is held by a run with another input
--        checksum (stored, or created by an earlier request of the batch); DETAIL is a JSON object
--        {index (0-based), idempotencyKey, runId (only when the run was stored before the call)}
--        of the first such request. Nothing of the batch is then stored.
--   Invariants:
--     * Within the batch the first request using a key creates the run; later ones get that run
--       (created false), as if the requests were submitted one by one.
--     * Runs are inserted in (pipeline, idempotency_key) order, so two batches that share keys
--       take the key locks (ON CONFLICT waits for an uncommitted holder) in the same order and
--       never deadlock with each other. (A batch with a subject inserts in input order, so it and
--       a concurrent batch sharing two keys in another order can still deadlock: PostgreSQL
--       aborts one, a retryable error for its caller.) A key taken by a transaction that
--       committed meanwhile is read back by the next statement, which (READ COMMITTED, volatile
--       function) sees that commit.
--     * One NOTIFY per queue that got a job.
--     * Stored runs are read by one index probe per request (subqueries per row), never by a
--       join: the plan is generic and kept by the connection, and a join planned while the runs
--       table was small hashes a seq scan of the whole table on every later batch (500
--       requests at 23,500 runs: 10 ms of the batch's 37).

CREATE OR REPLACE FUNCTION submit_firsts(p_reqs submit_request[])
RETURNS TABLE (ord bigint, run_id text, pipeline text, pipeline_version integer, input text, input_checksum text,
               idempotency_key text, tenant text, trace_id text, trace_parent text, first_stage text, first_run_id text,
               first_checksum text)
LANGUAGE sql IMMUTABLE
AS $$
  SELECT q.ordinality, q.run_id, q.pipeline, q.pipeline_version, q.input, q.input_checksum, q.idempotency_key,
    q.tenant, q.trace_id, q.trace_parent, q.first_stage,
    CASE WHEN q.idempotency_key IS NULL THEN q.run_id ELSE first_value(q.run_id) OVER w END,
    CASE WHEN q.idempotency_key IS NULL THEN q.input_checksum ELSE first_value(q.input_checksum) OVER w END
  FROM unnest(p_reqs) WITH ORDINALITY AS q
  WINDOW w AS (PARTITION BY q.pipeline, q.idempotency_key ORDER BY q.ordinality)
$$;

CREATE OR REPLACE FUNCTION submit_runs(p_requests json, p_now bigint, p_channel text)
RETURNS TABLE (ord bigint, created boolean, run json)
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET plan_cache_mode = force_generic_plan
SET random_page_cost = 1.1
AS $$
#variable_conflict use_column
DECLARE
  v_now bigint := coalesce(p_now, floor(extract(epoch FROM now()) * 1000)::bigint);
  v_reqs submit_request[];
  v_created text[];
  v_run_ids text[];
  v_is_new boolean[];
  v_conflict bigint;
  v_key text;
  v_stored_id text;
  v_notified bigint;
BEGIN
  v_reqs := ARRAY(
    SELECT r FROM json_array_elements(p_requests) WITH ORDINALITY AS e (item, ord)
    CROSS JOIN LATERAL json_populate_record(NULL::submit_request, e.item) AS r
    ORDER BY e.ord
  );

  -- The runs: one per request without a key, one per key (by its first request in the batch);
  -- a key already stored inserts nothing.
  WITH inserted AS (
    INSERT INTO runs (id, pipeline, pipeline_version, status, current_stage, input, input_checksum, idempotency_key,
                      tenant, trace_id, trace_parent, created_at, updated_at)
    SELECT q.run_id, q.pipeline, q.pipeline_version, 'queued', q.first_stage, q.input::json, q.input_checksum,
      q.idempotency_key, q.tenant, q.trace_id, q.trace_parent, v_now, v_now
    FROM submit_firsts(v_reqs) q
    WHERE q.run_id = q.first_run_id
    ORDER BY q.pipeline, q.idempotency_key, q.ord
    ON CONFLICT (pipeline, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id
  )
  SELECT coalesce(array_agg(i.id), '{}') INTO v_created FROM inserted i;

  -- Every request's run: the one its key's first request created, else the stored holder of the
  -- key (read by this new statement, so a holder that committed meanwhile is seen).
  WITH t AS (
    SELECT q.ord,
      CASE WHEN c.id IS NOT NULL THEN q.first_run_id ELSE s.id END AS run_id,
      CASE WHEN c.id IS NOT NULL THEN q.first_checksum ELSE s.input_checksum END AS held_checksum,
      q.input_checksum,
      (c.id IS NOT NULL AND q.run_id = q.first_run_id) AS is_new
    FROM submit_firsts(v_reqs) q
    LEFT JOIN unnest(v_created) AS c (id) ON c.id = q.first_run_id
    LEFT JOIN LATERAL (
      SELECT s.id, s.input_checksum FROM runs s
      WHERE c.id IS NULL AND s.pipeline = q.pipeline AND s.idempotency_key = q.idempotency_key LIMIT 1
    ) s ON true
  )
  SELECT array_agg(t.run_id ORDER BY t.ord), array_agg(t.is_new ORDER BY t.ord),
    min(t.ord) FILTER (WHERE t.held_checksum <> t.input_checksum)
  INTO v_run_ids, v_is_new, v_conflict
  FROM t;

  IF v_conflict IS NOT NULL THEN
    SELECT q.idempotency_key INTO v_key FROM unnest(v_reqs) WITH ORDINALITY AS q WHERE q.ordinality = v_conflict;
    v_stored_id := CASE WHEN v_run_ids[v_conflict] = ANY (v_created) THEN NULL ELSE v_run_ids[v_conflict] END;
    RAISE EXCEPTION 'idempotency key % was used with another input', v_key
      USING ERRCODE = 'KL409',
            DETAIL = json_strip_nulls(json_build_object('index', v_conflict - 1, 'idempotencyKey', v_key, 'runId', v_stored_id))::text;
  END IF;

  -- Stage records and first jobs of the new runs; one NOTIFY per queue.
  WITH q AS (
    SELECT r.* FROM unnest(v_reqs) AS r JOIN unnest(v_created) AS c (id) ON c.id = r.run_id
  ),
  staged AS (
    INSERT INTO stage_records (run_id, stage, stage_index, status)
    SELECT q.run_id, st.stage, st.n - 1, 'pending' FROM q CROSS JOIN LATERAL unnest(q.stages) WITH ORDINALITY AS st (stage, n)
  ),
  enqueued AS (
    INSERT INTO jobs (id, run_id, pipeline, stage, queue, kind, state, idempotency_key, max_attempts, priority,
                      available_at, enqueued_at, tenant, trace_id)
    SELECT q.job_id, q.run_id, q.pipeline, q.first_stage, q.first_queue, q.first_kind, 'ready', q.first_key,
      q.max_attempts, q.priority, v_now, v_now, q.tenant, q.trace_id
    FROM q
    RETURNING queue
  )
  SELECT count(pg_notify(p_channel, e.queue)) INTO v_notified FROM (SELECT DISTINCT queue FROM enqueued) AS e;

  RETURN QUERY
  SELECT t.n, t.is_new, (SELECT row_to_json(r) FROM runs r WHERE r.id = t.run_id)
  FROM unnest(v_run_ids, v_is_new) WITH ORDINALITY AS t (run_id, is_new, n)
  ORDER BY t.n;
END
$$;
