-- 0013_add_attempt_history_and_activity_indexes: what an operator reads besides the job path —
-- the failed attempts of each run, throughput per queue over the last minutes, runs by tenant.
--
-- Creates: tables failed_attempts and queue_activity; index runs_tenant. fail_item
-- (routines/jobs-commit.sql), which writes failed_attempts, changes with this migration.
-- Runs inside the migration transaction with search_path set to the store's schema.
-- Invariants:
--   * failed_attempts: one row per failed attempt of a job (stage or rollback), written by
--     fail_item in the commit that records the failure, and only there: the success path writes
--     nothing new. seq numbers a run's failures 0, 1, ... in commit order (the count of the run's
--     rows, taken under the run's row lock, which every failure of the run takes), like
--     ledger.seq. `worker` is the lease owner that ran the attempt; `action` what the engine
--     decided. Rows are never updated or deleted (runs are never deleted either).
--   * queue_activity: per queue and minute (minute_at = the minute's start, epoch ms), how many
--     jobs completed and attempts failed, as workers report them (recordActivity, about once a
--     second per worker, in a transaction of its own: a commit never writes here, so commits of
--     one queue never wait on each other for it). Counts only grow within their minute. Minutes
--     older than a day are deleted when activity is recorded. The key leads with the minute, so a
--     window of the last minutes is one range of it.
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

CREATE TABLE queue_activity (
  minute_at bigint NOT NULL,
  queue     text COLLATE "C" NOT NULL,
  completed bigint NOT NULL DEFAULT 0 CHECK (completed >= 0),
  failed    bigint NOT NULL DEFAULT 0 CHECK (failed >= 0),
  PRIMARY KEY (minute_at, queue)
);

CREATE INDEX runs_tenant ON runs (tenant, id) WHERE tenant IS NOT NULL;
