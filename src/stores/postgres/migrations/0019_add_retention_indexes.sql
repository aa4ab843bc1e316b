-- 0019_add_retention_indexes: what retention (the retention sub-port, `kiln prune`, the reaper's
-- prune pass) needs to find what has expired without scanning.
--
-- Creates: indexes runs_finished, request_records_created, retired_jobs_run.
-- Runs with search_path set to the store's schema (see 0001).
-- Invariants:
--   * runs_finished: the runs that have finished_at (succeeded, failed, dead_lettered, cancelled,
--     superseded; see 0014), by status then finish time: a prune walks each status's oldest runs
--     up to its cutoff. A run enters it once, when it ends (a replay takes it out again).
--   * request_records_created: request records by age, for their own period.
--   * retired_jobs_run: a run's retired job ids, deleted with the run.
--   * Rows of runs, stage_records, ledger, jobs, failed_attempts and retired_jobs are now deleted
--     by retention: a run and all its child rows in one statement (the foreign keys are NO
--     ACTION, checked at the end of the statement).
-- Append-only once released: change these objects in a later migration.

CREATE INDEX runs_finished ON runs (status, finished_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX request_records_created ON request_records (created_at);
CREATE INDEX retired_jobs_run ON retired_jobs (run_id);
