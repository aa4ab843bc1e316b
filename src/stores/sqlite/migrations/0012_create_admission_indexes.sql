-- 0012_create_admission_indexes: what admission control counts at submit (issue 14).
--
-- Creates: index runs_in_flight.
-- Invariants:
--   * runs_in_flight holds exactly the runs that are queued or running, by tenant (NULL: runs
--     without a tenant); status is in it so that the count reads the index alone (covering: a run
--     row, input and all, is never read), so counting a tenant's runs in flight (`COUNT_TENANT_IN_FLIGHT`, capped
--     at the limit) reads at most `limit` index entries, however many runs the tenant ever had.
--   * A queue's backlog (ready jobs) is counted on jobs_ready (0001), also capped at the limit.
-- Append-only once released: add 0013_... instead of editing this file.

CREATE INDEX runs_in_flight ON runs (tenant, status) WHERE status IN ('queued', 'running');
