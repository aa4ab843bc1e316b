-- 0009_set_finished_at_of_dead_lettered_runs: a dead-lettered run says when it stopped.
--
-- Changes: the commit of a failure (src/stores/sqlite/jobs/commit.ts) now sets runs.finished_at
-- when it dead-letters the run, and clears it when it parks the run. Backfills finished_at of the
-- dead-lettered runs stored before this migration (with updated_at, the time of their last
-- change: the dead letter).
-- Invariants:
--   * A run with status failed, dead_lettered, cancelled, superseded or succeeded has
--     finished_at; queued, running and parked runs have none (a replay clears it).
-- Append-only once released: add 0010_... instead of editing this file.

UPDATE runs SET finished_at = updated_at WHERE status = 'dead_lettered' AND finished_at IS NULL;
