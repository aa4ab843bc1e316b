-- 0007_add_publications_to_commit: completions set publications in their commit.
--
-- Changes: publications keys become COLLATE "C" (like every id and key, see 0001; the table has
-- had no writer before this migration); type commit_item gets `publish`; creates type
-- publication_request and function apply_publications; replaces complete_item,
-- complete_distinct_items and commit_items (0003, 0004), whose results gain a column (so they are
-- dropped and created again, not replaced in place); replaces commit_batch (0004) by
-- commit_batch_with_publications.
-- Why a new name for the entry point: a process still running code that calls commit_batch with
-- 0004's three result columns would take the new fourth column for its ordinality under the same
-- name (a shorter alias list is legal), and map outcomes to the wrong items; under a new name it
-- fails with "function does not exist" (SchemaVersionError) instead.
-- Every function is created with `SET search_path FROM CURRENT` (see 0003).
--
-- commit_item.publish: a JSON array of publication_request objects (subject_id, profile,
--   artifact_ref, subject_version), or NULL for none.
--
-- apply_publications(p_publish json, p_fence bigint, p_now bigint) -> integer
--   Applies the publications in array order, each one compare-and-set statement, stamped with the
--   committing job's fence; returns how many were refused.
--   Compare-and-set: a publication is written when no row exists for (subject_id, profile), or
--   the stored (subject_version, fence) is lower, compared as a pair: a higher version wins, the
--   same version wins with a higher fence (a later lease holder), never a lower version, and a
--   duplicate of the same holder is refused (it would change nothing). ON CONFLICT waits for a
--   concurrent writer of the row and compares with what it committed.
--
-- commit_batch_with_publications / commit_items (p_items json, p_now bigint, p_channel text, p_park_from text[])
--   In:  as in 0003.
--   Out: one row per item, in order: outcome, run_status, woken_queue (as in 0003) and
--        publications_refused (committed completions: how many of their publications
--        compare-and-set refused; NULL otherwise).
--   Invariants (besides those of 0003 and 0004):
--     * Publications are applied for a completion only after its fence check passed, in the same
--       transaction: a refused item publishes nothing; a refused publication refuses nothing else.
--     * Items publish in batch order, each as if alone: two items of one batch publishing the
--       same pair see each other's writes, in either commit path.
--     * Lock order: a job, then its run and the publication rows it writes (jobs before runs as
--       in 0001). Two batches publishing the same pairs in opposite orders can deadlock;
--       PostgreSQL aborts one, a retryable error for its caller (the engine retries the commit).
--
-- complete_distinct_items(p_items commit_item[], p_now, p_channel)
--   As in 0004, with one more column: `fence`, the lease fence of each committed item's job
--   (read by the DELETE that checks it), so the entry point can publish after the set-wise
--   statement. A batch that publishes nothing runs exactly the set-wise statement of 0004.
-- Append-only: change these functions with CREATE OR REPLACE (or DROP and CREATE) later.

ALTER TABLE publications
  ALTER COLUMN subject_id TYPE text COLLATE "C",
  ALTER COLUMN profile TYPE text COLLATE "C";

CREATE TYPE publication_request AS (
  subject_id      text COLLATE "C",
  profile         text COLLATE "C",
  artifact_ref    text,
  subject_version bigint
);

ALTER TYPE commit_item ADD ATTRIBUTE publish json;

CREATE FUNCTION apply_publications(p_publish json, p_fence bigint, p_now bigint) RETURNS integer
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  v_request publication_request;
  v_refused integer := 0;
BEGIN
  FOR v_request IN
    SELECT r.* FROM json_array_elements(p_publish) WITH ORDINALITY AS e (item, ord)
    CROSS JOIN LATERAL json_populate_record(NULL::publication_request, e.item) AS r
    ORDER BY e.ord
  LOOP
    INSERT INTO publications AS p (subject_id, profile, artifact_ref, subject_version, fence, updated_at)
    VALUES (v_request.subject_id, v_request.profile, v_request.artifact_ref, v_request.subject_version, p_fence, p_now)
    ON CONFLICT (subject_id, profile) DO UPDATE SET artifact_ref = excluded.artifact_ref,
      subject_version = excluded.subject_version, fence = excluded.fence, updated_at = excluded.updated_at
    WHERE (p.subject_version, p.fence) < (excluded.subject_version, excluded.fence);
    IF NOT FOUND THEN
      v_refused := v_refused + 1;
    END IF;
  END LOOP;
  RETURN v_refused;
END
$$;

DROP FUNCTION commit_batch(json, bigint, text, text[]);
DROP FUNCTION commit_items(json, bigint, text, text[]);
DROP FUNCTION complete_distinct_items(commit_item[], bigint, text);
DROP FUNCTION complete_item(commit_item, bigint, text);

-- As in 0003, plus the item's publications once its fence check passed.
CREATE FUNCTION complete_item(p_item commit_item, p_now bigint, p_channel text,
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
  RETURNING run_id, pipeline, stage, kind, idempotency_key, tenant, trace_id, fence INTO d;
  IF NOT FOUND THEN
    outcome := CASE lease_refusal(p_item.job_id) WHEN 'cancelled' THEN 'cancelled' ELSE 'lease_lost' END;
    RETURN;
  END IF;
  outcome := 'committed';
  publications_refused := apply_publications(p_item.publish, d.fence, p_now);

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

-- As in 0004, plus the `fence` column (see the header); the statement is otherwise unchanged.
CREATE FUNCTION complete_distinct_items(p_items commit_item[], p_now bigint, p_channel text)
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
    -- Fence check and delete in one statement, and first (see 0004 on why `state` is not tested).
    DELETE FROM jobs j USING it
    WHERE j.id = it.job_id AND j.lease_token = it.token AND j.lease_until > p_now
    RETURNING it.ord, j.run_id, j.pipeline, j.stage, j.kind, j.idempotency_key, j.tenant, j.trace_id, j.fence,
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

-- As in 0003, with publications_refused (NULL for failures).
CREATE FUNCTION commit_items(p_items json, p_now bigint, p_channel text, p_park_from text[])
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

-- commit_batch of 0004 under its new name: completions of distinct runs set-wise, anything else
-- item by item. A set-wise batch that publishes applies the publications after the set-wise
-- statement, item by item in batch order, for the committed items only.
CREATE FUNCTION commit_batch_with_publications(p_items json, p_now bigint, p_channel text, p_park_from text[])
RETURNS TABLE (outcome text, run_status text, woken_queue text, publications_refused integer)
LANGUAGE plpgsql
SET search_path FROM CURRENT
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
          THEN apply_publications(v_items[v_done.n].publish, v_done.fence, p_now) END;
        RETURN NEXT;
      END LOOP;
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT * FROM commit_items(p_items, p_now, p_channel, p_park_from);
END
$$;
