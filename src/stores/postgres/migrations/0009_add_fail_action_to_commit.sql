-- 0009_add_fail_action_to_commit: a permanent failure ends its run `failed`, not `dead_lettered`.
--
-- Changes: replaces fail_item (0003) with CREATE OR REPLACE, same arguments and results. Nothing
-- else changes: commit_items (0007) still calls fail_item for every `fail` item, and the set-wise
-- path of commit_batch_with_publications (0004, 0007) takes completions only.
-- Every function is created with `SET search_path FROM CURRENT` (see 0003).
--
-- commit_item.action (a fail item) is now retry | park | dead_letter | fail:
--   * dead_letter (attempts ran out; a replay may succeed): as in 0003. Job dead, stage record
--     dead_lettered (a rollback job: rollback_status dead_lettered), run dead_lettered with the
--     error; the compensation in enqueue_*, if any, enqueued (its stage's rollback_status pending).
--   * fail (a permanent error; neither a retry nor a replay can succeed): job dead (kept for
--     inspection), stage record failed with the error and finished_at (a rollback job:
--     rollback_status dead_lettered), run error = the error. Without a compensation in enqueue_*
--     the run ends failed (current_stage NULL, finished_at now); with one, it is enqueued as for
--     dead_letter and the run keeps its status (running) until the last compensation, completed
--     by complete_item or complete_distinct_items, ends it failed.
-- Out: as in 0003 (outcome, run_status, woken_queue).
-- Invariants: those of 0003 (a refused item changes nothing; job row locked before its run).
-- Append-only: change this function with CREATE OR REPLACE in a later migration.

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

  v_available_at := v_job.available_at;
  v_stage_status := 'failed';
  IF p_item.action = 'retry' THEN
    v_state := 'ready';
    v_available_at := p_now + greatest(0, p_item.delay_ms);
  ELSIF p_item.action = 'park' THEN
    v_state := 'parked';
    -- A compensation of a dead-lettered run cannot park the run (not a legal move): the job
    -- alone waits, visible as parked.
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

  UPDATE jobs SET state = v_state, available_at = v_available_at, last_error = p_item.error::json,
    lease_owner = NULL, lease_token = NULL, fence = NULL, lease_until = NULL, lease_ms = NULL
  WHERE id = v_job.id;
  IF v_job.kind = 'stage' THEN
    UPDATE stage_records SET status = v_stage_status,
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

  -- A retry leaves the run's status alone, so runs_status is not rewritten for it. A dead job
  -- (dead_letter or fail) always leaves its error on the run.
  UPDATE runs SET status = coalesce(v_new_run_status, status),
    error = CASE WHEN v_state = 'dead' THEN p_item.error::json ELSE error END,
    current_stage = CASE WHEN v_new_run_status = 'failed' THEN NULL ELSE current_stage END,
    finished_at = CASE WHEN v_new_run_status = 'failed' THEN p_now ELSE finished_at END,
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
