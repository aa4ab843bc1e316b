-- 0006_add_attempt_history_and_activity_indexes: what an operator reads besides the job path —
-- the failed attempts of each run, throughput per queue over the last minutes, runs by tenant.
--
-- Creates: table failed_attempts with index failed_attempts_time; column ledger.queue with index
-- ledger_completed; index runs_tenant.
-- Invariants:
--   * failed_attempts: one row per failed attempt of a job (stage or rollback), written by the
--     commit that records the failure, in the same transaction, and only there: the success path
--     writes nothing new. seq numbers a run's failures 0, 1, ... in commit order (the count of the
--     run's rows when the row is written), like ledger.seq; listAttempts sorts by it. `worker` is
--     the lease owner that ran the attempt; `action` what the engine decided (retry | park |
--     dead_letter | fail). Rows are never updated or deleted (runs are never deleted either).
--   * failed_attempts_time and ledger_completed: queueActivity counts a window of the last
--     minutes by walking these from the window's start, reading the index alone (time and queue
--     are in it), so its cost follows the window, not the store's history. Both grow at their
--     right edge (times only increase), the cheapest place for a b-tree insert.
--   * ledger.queue: the queue of the job that completed the key (`<pipeline>.<stage>` for stage
--     and rollback jobs alike). Rows written before this migration are filled in here from their
--     run's pipeline; every later insert sets it.
--   * runs_tenant: listRuns by tenant walks the tenant's runs newest first. Only runs with a
--     tenant are indexed, and neither column ever changes, so status moves never rewrite it.
--   * Times are epoch milliseconds from the store's clock; error is the JSON of a
--     StageErrorRecord ({class, code, message}) as TEXT.
-- Append-only once released: add a later migration instead of editing this file.

CREATE TABLE failed_attempts (
  run_id      TEXT NOT NULL REFERENCES runs (id),
  seq         INTEGER NOT NULL,
  job_id      TEXT NOT NULL,
  stage       TEXT NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('stage', 'rollback')),
  queue       TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  worker      TEXT,
  action      TEXT NOT NULL CHECK (action IN ('retry', 'park', 'dead_letter', 'fail')),
  error       TEXT NOT NULL,
  duration_ms REAL NOT NULL,
  failed_at   INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE INDEX failed_attempts_time ON failed_attempts (failed_at, queue);

ALTER TABLE ledger ADD COLUMN queue TEXT;
UPDATE ledger SET queue = (SELECT r.pipeline FROM runs r WHERE r.id = ledger.run_id) || '.' || stage;
CREATE INDEX ledger_completed ON ledger (completed_at, queue);

CREATE INDEX runs_tenant ON runs (tenant, id) WHERE tenant IS NOT NULL;
