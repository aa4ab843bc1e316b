-- 0003_create_commit_functions: `Backend.commit` as one server-side call.
--
-- Creates: type commit_item; functions lease_refusal, enqueue_job, complete_item, fail_item,
-- commit_items.
-- Why functions: a commit batch applies its items in order, each fenced by its own lease and each
-- seeing what the items before it did, in ONE transaction. One call does that in one round trip;
-- the same statements sent one by one would cost about five round trips per item.
-- Every function is created with `SET search_path FROM CURRENT`: the migration runs with the
-- backend's schema (then pg_temp) as search_path, so the tables named inside resolve to that
-- schema whatever the caller's search_path is.
--
-- commit_items(p_items json, p_now bigint, p_channel text, p_park_from text[])
--   In:  p_items: a JSON array of commit_item objects, in batch order (fields below);
--        p_now: epoch ms of this commit (the database clock's, or a test clock's);
--        p_channel: the schema's NOTIFY channel; a job made ready now sends pg_notify(channel, queue);
--        p_park_from: run statuses that may move to `parked` (core RUN_TRANSITIONS, passed in so
--        the transition table stays defined once, in TypeScript).
--   Out: one row per item, in order: outcome (committed | lease_lost | cancelled), run_status
--        (the run's status after the item; committed only), woken_queue (a queue that got a job
--        ready now, if any).
-- Invariants:
--   * A refused item changes nothing: the fence check (token matches, `leased`, lease_until >
--     now) comes before every write, under the job's row lock.
--   * Locks are taken job first, then run (see 0001), like every other operation.
--   * The idempotency key of an enqueued job arrives with chr(1)||'run'||chr(1) in place of the
--     run id (the caller knows the job, not its run): keys are still built by core/keys.ts only.
-- Append-only: change these functions with CREATE OR REPLACE in a later migration.

CREATE TYPE commit_item AS (
  type                 text,             -- complete | fail
  job_id               text,
  token                text,
  output               text,             -- complete: the output as JSON text
  duration_ms          double precision,
  error                text,             -- fail: the error record as JSON text
  action               text,             -- fail: retry | park | dead_letter
  delay_ms             bigint,           -- fail + retry
  enqueue_id           text,             -- the job to enqueue (complete: next; dead_letter: rollback), or NULL
  enqueue_stage        text,
  enqueue_queue        text,
  enqueue_kind         text,
  enqueue_key          text,             -- idempotency key with the run id placeholder
  enqueue_max_attempts integer,
  enqueue_priority     integer
);

-- Why a lease was refused: 'cancelled' when the job is gone because its run was cancelled or
-- superseded (retired_jobs), 'lost' otherwise.
CREATE FUNCTION lease_refusal(p_job_id text) RETURNS text
LANGUAGE sql STABLE
SET search_path FROM CURRENT
AS $$
  SELECT CASE
    WHEN EXISTS (SELECT 1 FROM jobs WHERE id = p_job_id) THEN 'lost'
    WHEN (SELECT r.status FROM retired_jobs t JOIN runs r ON r.id = t.run_id WHERE t.job_id = p_job_id)
      IN ('cancelled', 'superseded') THEN 'cancelled'
    ELSE 'lost'
  END
$$;

-- Enqueues the item's job for a run, ready now. A live job with the same key absorbs it (ON
-- CONFLICT DO NOTHING on jobs_live_key). Returns true, after a NOTIFY, when a job was inserted.
CREATE FUNCTION enqueue_job(p_item commit_item, p_run_id text, p_pipeline text, p_tenant text, p_trace_id text,
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

-- A completion: ledger entry (the first outcome of a key wins), stage record succeeded (a
-- rollback job: rollback_status succeeded), the next job enqueued or the run ended, the job deleted.
CREATE FUNCTION complete_item(p_item commit_item, p_now bigint, p_channel text,
                              OUT outcome text, OUT run_status text, OUT woken_queue text)
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
  RETURNING run_id, pipeline, stage, kind, idempotency_key, tenant, trace_id INTO d;
  IF NOT FOUND THEN
    outcome := CASE lease_refusal(p_item.job_id) WHEN 'cancelled' THEN 'cancelled' ELSE 'lease_lost' END;
    RETURN;
  END IF;
  outcome := 'committed';

  INSERT INTO ledger (run_id, key, seq, stage, kind, output, completed_at)
  VALUES (d.run_id, d.idempotency_key, (SELECT count(*) FROM ledger WHERE run_id = d.run_id), d.stage, d.kind,
          p_item.output::json, p_now)
  ON CONFLICT DO NOTHING;
  IF d.kind = 'stage' THEN
    UPDATE stage_records SET status = 'succeeded', output = p_item.output::json, error = NULL, lease_owner = NULL,
      lease_until = NULL, finished_at = p_now, duration_ms = p_item.duration_ms
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

-- A failed attempt: the job back to ready after the delay (retry), parked (park) or dead
-- (dead_letter, with its compensation enqueued if given); stage record and run to match.
CREATE FUNCTION fail_item(p_item commit_item, p_now bigint, p_channel text, p_park_from text[],
                          OUT outcome text, OUT run_status text, OUT woken_queue text)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  v_job jobs%ROWTYPE;
  v_run runs%ROWTYPE;
  v_state text;
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

  v_available_at := v_job.available_at;
  IF p_item.action = 'retry' THEN
    v_state := 'ready';
    v_available_at := p_now + greatest(0, p_item.delay_ms);
  ELSIF p_item.action = 'park' THEN
    v_state := 'parked';
    -- A compensation of a dead-lettered run cannot park the run (not a legal move): the job
    -- alone waits, visible as parked.
    IF v_run.status = ANY (p_park_from) THEN v_new_run_status := 'parked'; END IF;
  ELSE
    v_state := 'dead';
    v_new_run_status := 'dead_lettered';
  END IF;

  UPDATE jobs SET state = v_state, available_at = v_available_at, last_error = p_item.error::json,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE id = v_job.id;
  IF v_job.kind = 'stage' THEN
    UPDATE stage_records SET status = CASE WHEN v_state = 'dead' THEN 'dead_lettered' ELSE 'failed' END,
      error = p_item.error::json, duration_ms = p_item.duration_ms, lease_owner = NULL, lease_until = NULL,
      finished_at = CASE WHEN v_state = 'dead' THEN p_now ELSE finished_at END
    WHERE run_id = v_job.run_id AND stage = v_job.stage;
  ELSIF v_state = 'dead' THEN
    UPDATE stage_records SET rollback_status = 'dead_lettered' WHERE run_id = v_job.run_id AND stage = v_job.stage;
  END IF;
  IF v_state = 'ready' AND v_available_at <= p_now THEN
    PERFORM pg_notify(p_channel, v_job.queue);
    woken_queue := v_job.queue;
  END IF;

  -- A retry leaves the run's status alone, so runs_status is not rewritten for it.
  UPDATE runs SET status = coalesce(v_new_run_status, status),
    error = CASE WHEN v_new_run_status = 'dead_lettered' THEN p_item.error::json ELSE error END,
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

-- The batch: items applied one after another, in input order, inside the caller's transaction.
CREATE FUNCTION commit_items(p_items json, p_now bigint, p_channel text, p_park_from text[])
RETURNS TABLE (outcome text, run_status text, woken_queue text)
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
      SELECT c.outcome, c.run_status, c.woken_queue INTO outcome, run_status, woken_queue
      FROM complete_item(v_item, p_now, p_channel) AS c;
    ELSE
      SELECT f.outcome, f.run_status, f.woken_queue INTO outcome, run_status, woken_queue
      FROM fail_item(v_item, p_now, p_channel, p_park_from) AS f;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
