-- 0008_add_attempt_history_and_activity_indexes: what an operator reads besides the job path —
-- the failed attempts of each run, throughput per queue over the last minutes, runs by tenant.
--
-- Creates: tables failed_attempts and queue_activity; index runs_tenant.
-- Invariants:
--   * failed_attempts: one row per failed attempt of a job (stage or rollback), written by the
--     commit that records the failure, in the same transaction, and only there: the success path
--     writes nothing new. seq numbers a run's failures 0, 1, ... in commit order (the count of the
--     run's rows when the row is written), like ledger.seq; listAttempts sorts by it. `worker` is
--     the lease owner that ran the attempt; `action` what the engine decided (retry | park |
--     dead_letter | fail). Rows are never updated or deleted (runs are never deleted either).
--   * queue_activity: per queue and minute (minute_at = the minute's start, epoch ms), how many
--     jobs completed and attempts failed, as workers report them (recordActivity, about once a
--     second per worker, in a transaction of its own: a commit never writes here). Counts only
--     grow within their minute. Minutes older than a day are deleted when activity is recorded, so
--     the table holds at most a day of minutes per queue. The key leads with the minute, so a
--     window of the last minutes is one range of it.
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

CREATE TABLE queue_activity (
  minute_at INTEGER NOT NULL,
  queue     TEXT NOT NULL,
  completed INTEGER NOT NULL DEFAULT 0 CHECK (completed >= 0),
  failed    INTEGER NOT NULL DEFAULT 0 CHECK (failed >= 0),
  PRIMARY KEY (minute_at, queue)
) WITHOUT ROWID;

CREATE INDEX runs_tenant ON runs (tenant, id) WHERE tenant IS NOT NULL;
