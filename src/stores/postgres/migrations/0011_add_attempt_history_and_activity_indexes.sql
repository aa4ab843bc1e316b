-- 0011_add_attempt_history_and_activity_indexes: what an operator reads besides the job path —
-- the failed attempts of each run, throughput per queue over the last minutes, runs by tenant.
--
-- Creates: table failed_attempts with index failed_attempts_time; column ledger.queue with index
-- ledger_completed; index runs_tenant. The commit routines that write them (fail_item,
-- complete_item, complete_distinct_items in routines/jobs-commit.sql) change with this migration.
-- Runs inside the migration transaction with search_path set to the store's schema.
-- Invariants:
--   * failed_attempts: one row per failed attempt of a job (stage or rollback), written by
--     fail_item in the commit that records the failure, and only there: the success path writes
--     nothing new. seq numbers a run's failures 0, 1, ... in commit order (the count of the run's
--     rows, taken under the run's row lock, which every failure of the run takes), like
--     ledger.seq. `worker` is the lease owner that ran the attempt; `action` what the engine
--     decided. Rows are never updated or deleted (runs are never deleted either).
--   * failed_attempts_time and ledger_completed: queueActivity counts a window of the last
--     minutes by walking these from the window's start (index-only once vacuumed: time and queue
--     are in them), so its cost follows the window, not the store's history. Both grow at their
--     right edge (times only increase).
--   * ledger.queue: the queue of the job that completed the key (`<pipeline>.<stage>` for stage
--     and rollback jobs alike). Rows written before this migration are filled in here from their
--     run's pipeline; every later insert sets it.
--   * runs_tenant: listRuns by tenant walks the tenant's runs newest first. Only runs with a
--     tenant are indexed, and neither column ever changes, so status moves never rewrite it.
-- Append-only once released: change these objects in a later migration.

CREATE TABLE failed_attempts (
  run_id      text COLLATE "C" NOT NULL REFERENCES runs (id),
  seq         integer NOT NULL,
  job_id      text COLLATE "C" NOT NULL,
  stage       text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('stage', 'rollback')),
  queue       text COLLATE "C" NOT NULL,
  attempt     integer NOT NULL,
  worker      text,
  action      text NOT NULL CHECK (action IN ('retry', 'park', 'dead_letter', 'fail')),
  error       json NOT NULL,
  duration_ms double precision NOT NULL,
  failed_at   bigint NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX failed_attempts_time ON failed_attempts (failed_at, queue);

ALTER TABLE ledger ADD COLUMN queue text COLLATE "C";
UPDATE ledger l SET queue = r.pipeline || '.' || l.stage FROM runs r WHERE r.id = l.run_id;
CREATE INDEX ledger_completed ON ledger (completed_at, queue);

CREATE INDEX runs_tenant ON runs (tenant, id) WHERE tenant IS NOT NULL;
