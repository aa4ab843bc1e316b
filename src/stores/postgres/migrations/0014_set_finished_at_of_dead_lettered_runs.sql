-- 0014_set_finished_at_of_dead_lettered_runs: a dead-lettered run says when it stopped.
--
-- Changes: routine fail_item (routines/jobs-commit.sql, re-applied by migrate() after the
-- migrations) sets runs.finished_at when a failure dead-letters the run, and clears it when a
-- failure parks the run; this migration marks that change, so an older kiln refuses this schema
-- instead of putting its older routine back. Backfills finished_at of the dead-lettered runs
-- stored before it (with updated_at, the time of their last change: the dead letter).
-- Invariants:
--   * A run with status failed, dead_lettered, cancelled, superseded or succeeded has
--     finished_at; queued, running and parked runs have none (a replay clears it).
-- Append-only once released: change these objects in a later migration.

UPDATE runs SET finished_at = updated_at WHERE status = 'dead_lettered' AND finished_at IS NULL;
