-- routines/jobs-leases.sql: why a lease was refused.
--
-- Re-applied by migrate() (migrate.ts) whenever this file's sha256 changes; created with
-- `SET search_path FROM CURRENT` (the store's schema, then pg_temp; see routines/cache.sql).
--
-- lease_refusal(p_job_id text) -> text
--   In:  the id of a job whose lease check just failed (token, state or expiry).
--   Out: 'cancelled' when the job is gone because its run was cancelled or superseded (it is in
--        retired_jobs and the run has that status), 'lost' otherwise (still there with another
--        lease, or gone for any other reason).
--   Invariant: reads only; callers (the renew statement, complete_item, fail_item,
--   complete_distinct_items) report `cancelled` exactly when this says so.

CREATE OR REPLACE FUNCTION lease_refusal(p_job_id text) RETURNS text
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
