-- 0014_add_retention_indexes: what retention (the retention sub-port, `kiln prune`, the reaper's
-- prune pass) needs to find what has expired without scanning.
--
-- Creates: indexes runs_finished, request_records_created, retired_jobs_run.
-- Invariants:
--   * runs_finished: the runs that have finished_at (succeeded, failed, dead_lettered, cancelled,
--     superseded; see 0009), by status then finish time: a prune walks each status's oldest
--     runs up to its cutoff. A run enters it once, when it ends (a replay takes it out again).
--   * request_records_created: request records by age, for their own period.
--   * retired_jobs_run: a run's retired job ids, deleted with the run.
--   * Rows of runs, stage_records, ledger, jobs, failed_attempts and retired_jobs are now deleted
--     by retention, a run and all its child rows in one transaction (children first: the child
--     tables reference runs without ON DELETE CASCADE, see 0001).
-- Append-only once released: add a later migration instead of editing this file.

CREATE INDEX runs_finished ON runs (status, finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX request_records_created ON request_records (created_at);
CREATE INDEX retired_jobs_run ON retired_jobs (run_id);
