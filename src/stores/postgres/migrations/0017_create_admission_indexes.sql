-- 0017_create_admission_indexes: what admission control counts at submit (issue 14).
--
-- Creates: index runs_in_flight.
-- Runs with search_path set to the store's schema (see 0001).
-- Invariants:
--   * runs_in_flight holds exactly the runs that are queued or running, by tenant (NULL: runs
--     without a tenant), so counting a tenant's runs in flight (sql/jobs.ts countTenantInFlight,
--     capped at the limit) reads at most `limit` index entries, however many runs it ever had.
--   * A queue's backlog (ready jobs) is counted on jobs_ready (0001), also capped at the limit.
--   * Submissions with admission limits take the advisory lock of their tenant and first queue
--     (jobs/submit.ts), so two of them never both see the last free slot.
-- Append-only once released: change these objects in a later migration.

CREATE INDEX runs_in_flight ON runs (tenant) WHERE status IN ('queued', 'running');
