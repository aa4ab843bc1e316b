-- routines/jobs-commit.sql: a commit batch (completions and failures) as one server-side call.
--
-- Re-applied by migrate() (migrate.ts) whenever this file's sha256 changes; every function is
-- created with `SET search_path FROM CURRENT` (see routines/cache.sql), and the entry point with
-- `SET random_page_cost = 1.1`, under which every function it calls plans too (see
-- routines/jobs-claim.sql). A batch applies its items
-- in order, each fenced by its own lease and each seeing what the items before it did, in ONE
-- transaction: one call does that in one round trip, where the same statements sent one by one
-- would cost about five round trips per item.
--
-- commit_batch_with_publications(p_items json, p_now bigint, p_channel text, p_park_from text[])
--   The entry point (the store's commit statement calls it).
--   In:  p_items: a JSON array of commit_item objects, in batch order: type (complete | fail),
--        job_id, token, duration_ms; a completion's output (JSON text), publish (an array of
--        publication_request objects, or absent) and lock_key/lock_fence (the lock it ran under,
--        which fences its publications; absent for none); a failure's error (JSON text), action (retry |
--        park | dead_letter | fail) and delay_ms (retry); enqueue_* (the job to enqueue: a
--        completion's next job, a dead_letter or fail item's compensation; NULL for none);
--        p_now: epoch ms of this commit (the database clock's, or a test clock's);
--        p_channel: the schema's NOTIFY channel; a job made ready now sends pg_notify(channel, queue);
--        p_park_from: run statuses that may move to `parked` (core RUN_TRANSITIONS, passed in so
--        the transition table stays defined once, in TypeScript).
--   Out: one row per item, in order: outcome (committed | lease_lost | cancelled), run_status
--        (the run's status after the item; committed only), woken_queue (a queue that got a job
--        ready now, if any), publications_refused (committed completions: how many of their
--        publications compare-and-set refused; NULL otherwise).
--   When every item is a completion that enqueues no compensation, the job ids are distinct and
--   the jobs still present belong to distinct runs, no item can see another's writes: the batch is
--   applied by complete_distinct_items, set-wise (publications then applied item by item, in
--   batch order, for the committed items). Anything else (failures, rollbacks, two items of one
--   run or one job) goes through commit_items, item by item, in order.
--
-- Invariants:
--   * A refused item changes nothing: the fence check (token matches, `leased`, lease_until >
--     now) comes before every write, under the job's row lock, and a refused item does not
--     affect the others.
--   * Locks are taken job first, then run, then the publication rows it writes (as everywhere).
--     Two batches publishing the same pairs in opposite orders can deadlock; PostgreSQL aborts
--     one, a retryable error for its caller (the engine retries the commit).
--   * Items publish in batch order, each as if alone: two items of one batch publishing the same
--     pair see each other's writes, in either path.
--   * The idempotency key of an enqueued job arrives with chr(1)||'run'||chr(1) in place of the
--     run id (the caller knows the job, not its run): keys are still built by core/keys.ts only.
--   * A live job with the same key absorbs an enqueued one (ON CONFLICT DO NOTHING on
--     jobs_live_key).
--   * Every committed failure appends a failed_attempts row (job, attempt, worker, action, error,
--     duration). Completions record nothing per attempt beyond the ledger and the stage record.
--   * Failure actions: retry -> job ready after delay_ms, stage record failed; park -> job
--     parked, run parked (when p_park_from allows); dead_letter (attempts ran out, a replay may
--     succeed) -> job dead, stage record dead_lettered (a rollback job: rollback_status
--     dead_lettered), run dead_lettered with the error and finished_at (cleared by a replay;
--     migration 0014); a parked run has no finished_at; fail (a permanent error) -> job dead
--     (kept for inspection), stage record failed with finished_at (a rollback job:
--     rollback_status dead_lettered), run error = the error, and without a compensation the run
--     ends failed; with one it keeps its status until the last compensation completes and ends
--     it failed. A dead_letter or fail item's compensation is enqueued and its stage's
--     rollback_status becomes pending.
--   * A stage record counts the claims of its stage's live job on read only (migration 0020): a
--     completion, and a failure that leaves the job dead, add the job's attempt to `attempts`;
--     a retry or park leaves the job live and adds nothing. Both set started_at from the job's
--     first claim when the record has none.

-- Enqueues the item's job for a run, ready now. Returns true, after a NOTIFY, when a job was
-- inserted (false when a live job with the same key absorbed it).
CREATE OR REPLACE FUNCTION enqueue_job(p_item commit_item, p_run_id text, p_pipeline text, p_tenant text, p_trace_id text,
                            p_now bigint, p_channel text) RETURNS boolean
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  v_inserted boolean;
BEGIN
  INSERT INTO jobs (id, run_id, pipeline, stage, queue, kind, state, idempotency_key, max_attempts, priority,
                    available_at, enqueued_at, tenant, trace_id)
  VALUES (p_item.enqueue_id, p_run_id, p_pipeline, p_item.enqueue_stage, p_item.enqueue_queue, p_item.enqueue_kind,
          'ready', replace(p_item.enqueue_key, chr(1) || 'run' || chr(1), p_run_id), p_item.enqueue_max_attempts,
          p_item.enqueue_priority, p_now, p_now, p_tenant, p_trace_id)
  ON CONFLICT DO NOTHING;
  v_inserted := FOUND;
  IF v_inserted THEN
    PERFORM pg_notify(p_channel, p_item.enqueue_queue);
  END IF;
  RETURN v_inserted;
END
$$;

-- A completion: publications (after the fence check), ledger entry (the first outcome of a key
-- wins), stage record succeeded (a rollback job: rollback_status succeeded), the next job
-- enqueued or the run ended, the job deleted.
CREATE OR REPLACE FUNCTION complete_item(p_item commit_item, p_now bigint, p_channel text,
                              OUT outcome text, OUT run_status text, OUT woken_queue text, OUT publications_refused integer)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  d record;
BEGIN
  -- Fence check and delete in one statement, and first: a refused lease changes nothing, and the
  -- next job can never be absorbed by this one's live key.
  DELETE FROM jobs
  WHERE id = p_item.job_id AND lease_token = p_item.token AND state = 'leased' AND lease_until > p_now
  RETURNING run_id, pipeline, stage, kind, idempotency_key, tenant, trace_id, fence, attempt, started_at INTO d;
  IF NOT FOUND THEN
    outcome := CASE lease_refusal(p_item.job_id) WHEN 'cancelled' THEN 'cancelled' ELSE 'lease_lost' END;
    RETURN;
  END IF;
  outcome := 'committed';
  publications_refused := apply_publications(p_item.publish, d.fence, p_now, p_item.lock_key, p_item.lock_fence);

  INSERT INTO ledger (run_id, key, seq, stage, kind, output, completed_at)
  VALUES (d.run_id, d.idempotency_key, (SELECT count(*) FROM ledger WHERE run_id = d.run_id), d.stage, d.kind,
          p_item.output::json, p_now)
  ON CONFLICT DO NOTHING;
  IF d.kind = 'stage' THEN
    UPDATE stage_records SET status = 'succeeded', output = p_item.output::json, error = NULL, lease_owner = NULL,
      lease_until = NULL, finished_at = p_now, duration_ms = p_item.duration_ms, attempts = attempts + d.attempt,
      started_at = coalesce(started_at, d.started_at)
    WHERE run_id = d.run_id AND stage = d.stage;
  ELSE
    UPDATE stage_records SET rollback_status = 'succeeded' WHERE run_id = d.run_id AND stage = d.stage;
  END IF;

  IF p_item.enqueue_id IS NULL THEN
    run_status := CASE WHEN d.kind = 'stage' THEN 'succeeded' ELSE 'failed' END;
    UPDATE runs SET status = run_status, current_stage = NULL, finished_at = p_now, updated_at = p_now
    WHERE id = d.run_id;
    RETURN;
  END IF;
  IF enqueue_job(p_item, d.run_id, d.pipeline, d.tenant, d.trace_id, p_now, p_channel) THEN
    woken_queue := p_item.enqueue_queue;
  END IF;
  IF p_item.enqueue_kind = 'rollback' THEN
    UPDATE stage_records SET rollback_status = 'pending' WHERE run_id = d.run_id AND stage = p_item.enqueue_stage;
    UPDATE runs SET updated_at = p_now WHERE id = d.run_id RETURNING status INTO run_status;
  ELSE
    -- The status is not assigned: runs_status is not rewritten on every transition.
    UPDATE runs SET current_stage = p_item.enqueue_stage, updated_at = p_now WHERE id = d.run_id
    RETURNING status INTO run_status;
  END IF;
END
$$;

-- A failed attempt, by its action (see the header); stage record and run to match.
CREATE OR REPLACE FUNCTION fail_item(p_item commit_item, p_now bigint, p_channel text, p_park_from text[],
                                     OUT outcome text, OUT run_status text, OUT woken_queue text)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  v_job jobs%ROWTYPE;
  v_run runs%ROWTYPE;
  v_state text;
  v_stage_status text;
  v_available_at bigint;
  v_new_run_status text; -- NULL: the run's status stays
BEGIN
  SELECT * INTO v_job FROM jobs WHERE id = p_item.job_id FOR UPDATE;
  IF NOT FOUND THEN
    outcome := CASE lease_refusal(p_item.job_id) WHEN 'cancelled' THEN 'cancelled' ELSE 'lease_lost' END;
    RETURN;
  END IF;
  IF v_job.state <> 'leased' OR v_job.lease_token IS DISTINCT FROM p_item.token OR v_job.lease_until <= p_now THEN
    outcome := 'lease_lost';
    RETURN;
  END IF;
  outcome := 'committed';
  SELECT * INTO v_run FROM runs WHERE id = v_job.run_id FOR NO KEY UPDATE;
  -- The failure history (migration 0013): under the run's row lock, so seq counts every earlier
  -- failure of the run; the lease owner is read before the update below clears it.
  INSERT INTO failed_attempts (run_id, seq, job_id, stage, kind, queue, attempt, worker, action, error, duration_ms, failed_at)
  VALUES (v_job.run_id, (SELECT count(*) FROM failed_attempts WHERE run_id = v_job.run_id), v_job.id, v_job.stage, v_job.kind,
          v_job.queue, v_job.attempt, v_job.lease_owner, p_item.action, p_item.error::json, p_item.duration_ms, p_now);

  v_available_at := v_job.available_at;
  v_stage_status := 'failed';
  IF p_item.action = 'retry' THEN
    v_state := 'ready';
    v_available_at := p_now + greatest(0, p_item.delay_ms);
  ELSIF p_item.action = 'park' THEN
    v_state := 'parked';
    -- p_park_from lists the run statuses that may move to parked (core/run/transitions.ts; a
    -- dead-lettered run's failing compensation parks it too); from any other the job alone waits.
    IF v_run.status = ANY (p_park_from) THEN v_new_run_status := 'parked'; END IF;
  ELSIF p_item.action = 'fail' THEN
    v_state := 'dead';
    -- With a compensation to run the run stays as it is: the last compensation ends it failed.
    IF p_item.enqueue_id IS NULL THEN v_new_run_status := 'failed'; END IF;
  ELSE
    v_state := 'dead';
    v_stage_status := 'dead_lettered';
    v_new_run_status := 'dead_lettered';
  END IF;

  -- The attempt ran, so any lock wait before it is over (lock_wait_since cleared).
  UPDATE jobs SET state = v_state, available_at = v_available_at, last_error = p_item.error::json, lock_wait_since = NULL,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE id = v_job.id;
  IF v_job.kind = 'stage' THEN
    UPDATE stage_records SET status = v_stage_status,
      error = p_item.error::json, duration_ms = p_item.duration_ms, lease_owner = NULL, lease_until = NULL,
      finished_at = CASE WHEN v_state = 'dead' THEN p_now ELSE finished_at END,
      attempts = attempts + CASE WHEN v_state = 'dead' THEN v_job.attempt ELSE 0 END,
      started_at = coalesce(started_at, v_job.started_at)
    WHERE run_id = v_job.run_id AND stage = v_job.stage;
  ELSIF v_state = 'dead' THEN
    UPDATE stage_records SET rollback_status = 'dead_lettered' WHERE run_id = v_job.run_id AND stage = v_job.stage;
  END IF;
  IF v_state = 'ready' AND v_available_at <= p_now THEN
    PERFORM pg_notify(p_channel, v_job.queue);
    woken_queue := v_job.queue;
  END IF;

  -- A retry leaves the run's status alone, so runs_status is not rewritten for it. A dead job
  -- (dead_letter or fail) always leaves its error on the run.
  UPDATE runs SET status = coalesce(v_new_run_status, status),
    error = CASE WHEN v_state = 'dead' THEN p_item.error::json ELSE error END,
    current_stage = CASE WHEN v_new_run_status = 'failed' THEN NULL ELSE current_stage END,
    -- Dead-lettered is where the run stops until a replay (which clears finished_at again,
    -- migration 0014); parked waits for an operator, so it is not finished.
    finished_at = CASE WHEN v_new_run_status IN ('failed', 'dead_lettered') THEN p_now
                       WHEN v_new_run_status = 'parked' THEN NULL ELSE finished_at END,
    updated_at = p_now
  WHERE id = v_run.id
  RETURNING status INTO run_status;
  IF v_state = 'dead' AND p_item.enqueue_id IS NOT NULL THEN
    IF enqueue_job(p_item, v_run.id, v_run.pipeline, v_run.tenant, v_run.trace_id, p_now, p_channel) THEN
      woken_queue := p_item.enqueue_queue;
    END IF;
    UPDATE stage_records SET rollback_status = 'pending' WHERE run_id = v_run.id AND stage = p_item.enqueue_stage;
  END IF;
END
$$;

-- The general path: items applied one after another, in input order, inside the caller's
-- transaction.
CREATE OR REPLACE FUNCTION commit_items(p_items json, p_now bigint, p_channel text, p_park_from text[])
RETURNS TABLE (outcome text, run_status text, woken_queue text, publications_refused integer)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  v_item commit_item;
BEGIN
  FOR v_item IN
    SELECT r.* FROM json_array_elements(p_items) WITH ORDINALITY AS e (item, ord)
    CROSS JOIN LATERAL json_populate_record(NULL::commit_item, e.item) AS r
    ORDER BY e.ord
  LOOP
    IF v_item.type = 'complete' THEN
      SELECT c.outcome, c.run_status, c.woken_queue, c.publications_refused
      INTO outcome, run_status, woken_queue, publications_refused
      FROM complete_item(v_item, p_now, p_channel) AS c;
    ELSE
      SELECT f.outcome, f.run_status, f.woken_queue, NULL::integer INTO outcome, run_status, woken_queue, publications_refused
      FROM fail_item(v_item, p_now, p_channel, p_park_from) AS f;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

-- The set-wise completion of items of distinct runs: one fenced DELETE for all items, then ledger
-- entries, stage records, next jobs and runs as one statement each (all in one statement).
-- Refused items (stale token, expired lease, job gone) change nothing and get lease_lost or
-- cancelled exactly as complete_item would tell them. `fence` is the lease fence of each
-- committed item's job (read by the DELETE that checks it), so the caller can publish after it.
CREATE OR REPLACE FUNCTION complete_distinct_items(p_items commit_item[], p_now bigint, p_channel text)
RETURNS TABLE (outcome text, run_status text, woken_queue text, fence bigint)
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
    RETURNING it.ord, j.run_id, j.pipeline, j.stage, j.kind, j.idempotency_key, j.tenant, j.trace_id, j.fence, j.attempt, j.started_at,
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
      attempts = CASE WHEN d.kind = 'stage' THEN st.attempts + d.attempt ELSE st.attempts END,
      started_at = CASE WHEN d.kind = 'stage' THEN coalesce(st.started_at, d.started_at) ELSE st.started_at END,
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
    RETURNING d.ord, d.fence, r.status
  )
  SELECT CASE
      WHEN m.ord IS NOT NULL THEN 'committed'
      WHEN lease_refusal(it.job_id) = 'cancelled' THEN 'cancelled'
      ELSE 'lease_lost'
    END,
    m.status,
    e.queue,
    m.fence
  FROM it
  LEFT JOIN moved m ON m.ord = it.ord
  LEFT JOIN enqueued e ON e.id = it.enqueue_id AND m.ord IS NOT NULL
  -- notified is referenced so that its NOTIFYs are sent (a CTE no one reads is not run).
  CROSS JOIN notified
  ORDER BY it.ord;
END
$$;

-- The entry point (see the header).
CREATE OR REPLACE FUNCTION commit_batch_with_publications(p_items json, p_now bigint, p_channel text, p_park_from text[])
RETURNS TABLE (outcome text, run_status text, woken_queue text, publications_refused integer)
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET random_page_cost = 1.1
AS $$
DECLARE
  v_items commit_item[];
  v_general boolean;
  v_publishing boolean;
  v_distinct boolean;
  v_done record;
BEGIN
  v_items := ARRAY(
    SELECT r FROM json_array_elements(p_items) WITH ORDINALITY AS e (item, ord)
    CROSS JOIN LATERAL json_populate_record(NULL::commit_item, e.item) AS r
    ORDER BY e.ord
  );
  SELECT coalesce(bool_or(i.type <> 'complete' OR i.enqueue_kind = 'rollback'), false), coalesce(bool_or(i.publish IS NOT NULL), false)
  INTO v_general, v_publishing
  FROM unnest(v_items) i;
  IF NOT v_general THEN
    -- A job's run never changes, so this needs no lock: the fenced DELETE decides the rest.
    SELECT count(DISTINCT i.job_id) = count(*)
       AND (SELECT count(DISTINCT j.run_id) = count(*) FROM jobs j WHERE j.id IN (SELECT x.job_id FROM unnest(v_items) x))
    INTO v_distinct
    FROM unnest(v_items) i;
    IF v_distinct AND NOT v_publishing THEN
      RETURN QUERY SELECT c.outcome, c.run_status, c.woken_queue, NULL::integer FROM complete_distinct_items(v_items, p_now, p_channel) AS c;
      RETURN;
    END IF;
    IF v_distinct THEN
      -- Rows come in item order (ORDER BY it.ord), so the ordinality is the item's index.
      FOR v_done IN
        SELECT c.outcome, c.run_status, c.woken_queue, c.fence, c.n
        FROM complete_distinct_items(v_items, p_now, p_channel) WITH ORDINALITY AS c (outcome, run_status, woken_queue, fence, n)
      LOOP
        outcome := v_done.outcome;
        run_status := v_done.run_status;
        woken_queue := v_done.woken_queue;
        publications_refused := CASE WHEN v_done.outcome = 'committed'
          THEN apply_publications(v_items[v_done.n].publish, v_done.fence, p_now, v_items[v_done.n].lock_key, v_items[v_done.n].lock_fence) END;
        RETURN NEXT;
      END LOOP;
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT * FROM commit_items(p_items, p_now, p_channel, p_park_from);
END
$$;
