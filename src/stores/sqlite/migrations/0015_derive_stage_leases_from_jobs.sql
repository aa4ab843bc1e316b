-- 0015_derive_stage_leases_from_jobs: a claim no longer writes the stage record (issue 13: fewer
-- row writes per job); what the lease means for the record is read from the live job instead.
--
-- Creates: column jobs.started_at; view stage_records_live.
-- Changes: a claim (src/stores/sqlite/jobs/claim.ts) writes the job row only, setting
--   jobs.started_at on the job's first claim; a renewal writes the record only to store progress.
--   While a stage job is live (not dead), its record's `attempts` counts the stage's claims
--   before the job's own (the job's `attempt` counts those); the job's count is added to the
--   record when the job leaves for good: completed, dead, restarted from parked, or deleted by its
--   run's end. Every write that ends a lease sets started_at from the job's when the record has none.
-- Backfills: the records of live stage jobs stop counting the job's claims, and drop the stored
--   lease (read from the job now); a record left `running` by a reaped lease stays so, as reaps
--   keep writing it.
-- Invariants:
--   * stage_records_live reads exactly what the stage record read before this migration: a
--     stage whose live stage job is leased reads `running` with the job's lease owner and end;
--     attempts = the record's + the live stage job's attempt; started_at the record's, else the
--     job's first claim. At most one live stage job per (run, stage): its idempotency key is a
--     function of run, stage and kind (core/keys.ts), unique among live jobs (jobs_run_key).
--   * Readers of a stage's status, attempts, lease or start read stage_records_live, never
--     stage_records.
-- Append-only once released: add 0016_... instead of editing this file.

ALTER TABLE jobs ADD COLUMN started_at INTEGER;

UPDATE stage_records SET lease_owner = NULL, lease_until = NULL,
  attempts = attempts - (
    SELECT j.attempt FROM jobs AS j
    WHERE j.run_id = stage_records.run_id AND j.stage = stage_records.stage AND j.kind = 'stage' AND j.dead_slot = '')
WHERE EXISTS (
  SELECT 1 FROM jobs AS j
  WHERE j.run_id = stage_records.run_id AND j.stage = stage_records.stage AND j.kind = 'stage' AND j.dead_slot = '');

CREATE VIEW stage_records_live AS
SELECT s.run_id, s.stage, s.stage_index,
  CASE WHEN j.state = 'leased' THEN 'running' ELSE s.status END AS status,
  s.attempts + coalesce(j.attempt, 0) AS attempts,
  s.output, s.error, s.progress,
  CASE WHEN j.state = 'leased' THEN j.lease_owner ELSE s.lease_owner END AS lease_owner,
  CASE WHEN j.state = 'leased' THEN j.lease_until ELSE s.lease_until END AS lease_until,
  s.rollback_status,
  coalesce(s.started_at, j.started_at) AS started_at,
  s.finished_at, s.duration_ms
FROM stage_records AS s
LEFT JOIN jobs AS j ON j.run_id = s.run_id AND j.stage = s.stage AND j.kind = 'stage' AND j.dead_slot = '';
