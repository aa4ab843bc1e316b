-- routines/publications.sql: publications set by compare-and-set inside a commit.
--
-- Re-applied by migrate() (migrate.ts) whenever this file's sha256 changes; created with
-- `SET search_path FROM CURRENT` (the store's schema, then pg_temp; see routines/cache.sql).
--
-- apply_publications(p_publish json, p_fence bigint, p_now bigint, p_lock_key text, p_lock_fence bigint) -> integer
--   In:  p_publish: a JSON array of publication_request objects (subject_id, profile,
--        artifact_ref, subject_version), or NULL for none; p_fence: the lease fence of the
--        committing job; p_now: epoch ms of the commit; p_lock_key, p_lock_fence: the lock the
--        completion ran under (NULL for none).
--   Out: how many publications compare-and-set refused.
--   Invariants:
--     * Under a lock, every publication is refused unless p_lock_fence is still the lock's
--       current fence (lock_fence_is_current, routines/locks.sql: nobody took the lock over and
--       it was not reaped); accepted ones are written with greatest(p_fence, p_lock_fence), so
--       writers of one subject version are ordered by lock fence.
--     * Applied in array order, each one statement: a publication is written when no row exists
--       for (subject_id, profile), or the stored (subject_version, fence) is lower, compared as a
--       pair: a higher version wins, the same version wins with a higher fence (a later lease
--       holder), never a lower version, and a duplicate of the same holder is refused (it would
--       change nothing).
--     * ON CONFLICT waits for a concurrent writer of the row and compares with what it committed.
--     * Called only after the completion's fence check passed, in its transaction: a refused
--       item publishes nothing, and a refused publication refuses nothing else.

CREATE OR REPLACE FUNCTION apply_publications(p_publish json, p_fence bigint, p_now bigint, p_lock_key text, p_lock_fence bigint)
RETURNS integer
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  v_request publication_request;
  v_refused integer := 0;
  v_fence bigint := greatest(p_fence, p_lock_fence);
BEGIN
  IF p_lock_key IS NOT NULL AND NOT lock_fence_is_current(p_lock_key, p_lock_fence) THEN
    RETURN coalesce(json_array_length(p_publish), 0);
  END IF;
  FOR v_request IN
    SELECT r.* FROM json_array_elements(p_publish) WITH ORDINALITY AS e (item, ord)
    CROSS JOIN LATERAL json_populate_record(NULL::publication_request, e.item) AS r
    ORDER BY e.ord
  LOOP
    INSERT INTO publications AS p (subject_id, profile, artifact_ref, subject_version, fence, updated_at)
    VALUES (v_request.subject_id, v_request.profile, v_request.artifact_ref, v_request.subject_version, v_fence, p_now)
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
