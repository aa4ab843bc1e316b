-- 0001_create_core_tables: the tables every Backend method works on.
--
-- Creates: runs, stage_records, jobs, ledger, queues, fence_counter, retired_jobs.
-- Invariants:
--   * Times are epoch milliseconds (INTEGER) from the backend's clock; JSON values are TEXT.
--   * At most one live (non-dead) job per idempotency key: jobs_live_idempotency_key. Enqueues
--     use INSERT ... ON CONFLICT DO NOTHING, so a duplicate live key collapses into the first job.
--   * Submission idempotency keys are unique per pipeline: runs_idempotency_key.
--   * fence_counter holds exactly one row (id = 1); every claim (and later every lock grant)
--     takes the next value inside its BEGIN IMMEDIATE transaction, so fences are strictly
--     increasing across all processes sharing the file.
--   * retired_jobs remembers jobs deleted because their run was cancelled, superseded or drained,
--     so a worker still holding one is told `cancelled` rather than `lease_lost`.
-- Append-only: never edit this file once released; add 0003_... instead.

CREATE TABLE runs (
  id               TEXT PRIMARY KEY,
  pipeline         TEXT NOT NULL,
  pipeline_version INTEGER NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed',
                     'dead_lettered', 'cancelled', 'superseded', 'parked')),
  current_stage    TEXT,
  input            TEXT NOT NULL,
  input_checksum   TEXT NOT NULL,
  idempotency_key  TEXT,
  subject_id       TEXT,
  subject_version  INTEGER,
  tenant           TEXT,
  trace_id         TEXT,
  error            TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  finished_at      INTEGER
);
CREATE UNIQUE INDEX runs_idempotency_key ON runs (pipeline, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX runs_subject ON runs (pipeline, subject_id, subject_version) WHERE subject_id IS NOT NULL;
CREATE INDEX runs_status ON runs (status, id);
CREATE INDEX runs_pipeline ON runs (pipeline, id);

CREATE TABLE stage_records (
  run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  stage           TEXT NOT NULL,
  stage_index     INTEGER NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed',
                    'dead_lettered', 'skipped')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  output          TEXT,
  error           TEXT,
  progress        TEXT,
  lease_owner     TEXT,
  lease_until     INTEGER,
  rollback_status TEXT CHECK (rollback_status IN ('pending', 'succeeded', 'dead_lettered')),
  started_at      INTEGER,
  finished_at     INTEGER,
  duration_ms     INTEGER,
  PRIMARY KEY (run_id, stage)
) WITHOUT ROWID;

CREATE TABLE jobs (
  id              TEXT PRIMARY KEY,
  run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  pipeline        TEXT NOT NULL,
  stage           TEXT NOT NULL,
  queue           TEXT NOT NULL,
  kind            TEXT NOT NULL CHECK (kind IN ('stage', 'rollback')),
  state           TEXT NOT NULL CHECK (state IN ('ready', 'leased', 'parked', 'dead')),
  idempotency_key TEXT NOT NULL,
  attempt         INTEGER NOT NULL DEFAULT 0,
  max_attempts    INTEGER NOT NULL,
  priority        INTEGER NOT NULL,
  available_at    INTEGER NOT NULL,
  enqueued_at     INTEGER NOT NULL,
  tenant          TEXT,
  trace_id        TEXT,
  lease_owner     TEXT,
  lease_token     TEXT,
  fence           INTEGER,
  lease_until     INTEGER,
  lease_ms        INTEGER,
  redeliveries    INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT
);
CREATE UNIQUE INDEX jobs_live_idempotency_key ON jobs (idempotency_key) WHERE state <> 'dead';
-- The claim walks this in claim order (priority, available_at, id) within one queue and state;
-- queue stats group by its first two columns.
CREATE INDEX jobs_claim ON jobs (queue, state, priority, available_at, id);
CREATE INDEX jobs_run ON jobs (run_id);
-- The reaper looks for expired leases across all queues without scanning ready jobs.
CREATE INDEX jobs_lease_expiry ON jobs (lease_until) WHERE state = 'leased';

CREATE TABLE ledger (
  key          TEXT PRIMARY KEY,
  run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  stage        TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('stage', 'rollback')),
  output       TEXT NOT NULL,
  completed_at INTEGER NOT NULL
);
-- rowid order is insertion (completion) order; readLedger sorts by it.
CREATE INDEX ledger_run ON ledger (run_id);

CREATE TABLE queues (
  name       TEXT PRIMARY KEY,
  paused     INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE fence_counter (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  value INTEGER NOT NULL
);
INSERT INTO fence_counter (id, value) VALUES (1, 0);

CREATE TABLE retired_jobs (
  job_id     TEXT PRIMARY KEY,
  run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  retired_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX retired_jobs_run ON retired_jobs (run_id);
