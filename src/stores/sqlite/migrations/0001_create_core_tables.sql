-- 0001_create_core_tables: the tables every Backend method works on.
--
-- Creates: runs, stage_records, jobs, ledger, queues, fence_counter, retired_jobs.
-- Invariants:
--   * Times are epoch milliseconds (INTEGER) from the backend's clock; JSON values are TEXT.
--   * Every table keyed by a TEXT id is WITHOUT ROWID: the key IS the table's b-tree, so a write
--     touches one b-tree fewer than a rowid table with a TEXT key (which hides a second index).
--     Ids sort by creation time, so new rows land at the right edge of each tree.
--   * Indexes are the ones the hot path (submit, claim, commit) or an operator query with no
--     cheap alternative needs; each says which. `jobs` holds only live and dead jobs, so rare
--     operator reads (listJobs without a run, queueStats) may scan it.
--   * At most one live (non-dead) job per idempotency key: jobs_run_key is UNIQUE over
--     (run_id, idempotency_key, dead_slot) where dead_slot is '' while the job is live and the
--     job's own id once it is dead (CHECK below). Enqueues use INSERT ... ON CONFLICT DO NOTHING,
--     so a duplicate live key collapses into the first job. Keys embed their run id
--     (core/keys.ts), so leading with run_id changes nothing about uniqueness and lets the same
--     index find a run's jobs. dead_slot only changes on dead-letter and replay, so claims and
--     retries never rewrite this index.
--   * Submission idempotency keys are unique per pipeline: runs_idempotency_key.
--   * fence_counter holds exactly one row (id = 1); every claim (and later every lock grant)
--     takes the next value inside its BEGIN IMMEDIATE transaction, so fences are strictly
--     increasing across all processes sharing the file.
--   * ledger.seq numbers a run's entries 0, 1, ... in completion order (the count of the run's
--     entries when the entry is written); readLedger sorts by it.
--   * retired_jobs remembers jobs deleted because their run was cancelled, superseded or drained,
--     so a worker still holding one is told `cancelled` rather than `lease_lost`.
--   * Runs are never deleted, so child rows reference runs without ON DELETE CASCADE (which
--     would need a run_id-leading index on every child table).
-- Append-only once released: add 0003_... instead of editing this file.

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
) WITHOUT ROWID;
-- submitRun: idempotent submission (only runs submitted with a key).
CREATE UNIQUE INDEX runs_idempotency_key ON runs (pipeline, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- submitRun: supersession (only runs with a subject).
CREATE INDEX runs_subject ON runs (pipeline, subject_id, subject_version) WHERE subject_id IS NOT NULL;
-- listRuns by status, for the statuses that need an operator: few runs among many, and never
-- written on the happy path (submit, claim, success). Queued, running and succeeded runs are
-- found by walking the table newest first, as is a pipeline (deployments run few pipelines).
-- The OR chain (not IN) is what lets SQLite prove that `status = '<literal>'` implies it.
CREATE INDEX runs_status ON runs (status, id)
  WHERE status = 'failed' OR status = 'dead_lettered' OR status = 'cancelled' OR status = 'superseded'
    OR status = 'parked';

CREATE TABLE stage_records (
  run_id          TEXT NOT NULL REFERENCES runs (id),
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
  run_id          TEXT NOT NULL REFERENCES runs (id),
  pipeline        TEXT NOT NULL,
  stage           TEXT NOT NULL,
  queue           TEXT NOT NULL,
  kind            TEXT NOT NULL CHECK (kind IN ('stage', 'rollback')),
  state           TEXT NOT NULL CHECK (state IN ('ready', 'leased', 'parked', 'dead')),
  idempotency_key TEXT NOT NULL,
  dead_slot       TEXT NOT NULL DEFAULT '',
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
  last_error      TEXT,
  CHECK (dead_slot = CASE WHEN state = 'dead' THEN id ELSE '' END)
) WITHOUT ROWID;
-- Enqueue dedup (see above) and every "jobs of this run" lookup (cancel, supersede, resume, listJobs).
CREATE UNIQUE INDEX jobs_run_key ON jobs (run_id, idempotency_key, dead_slot);
-- claimJobs walks this in claim order (priority, available_at, then the key `id`) within one
-- queue; it holds ready jobs only, so leased, parked and dead jobs never slow a claim down.
CREATE INDEX jobs_ready ON jobs (queue, priority, available_at) WHERE state = 'ready';
-- claimJobs (redeliveries) and the reaper find expired leases without scanning ready jobs.
CREATE INDEX jobs_lease_expiry ON jobs (lease_until) WHERE state = 'leased';

CREATE TABLE ledger (
  run_id       TEXT NOT NULL REFERENCES runs (id),
  key          TEXT NOT NULL,
  seq          INTEGER NOT NULL,
  stage        TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('stage', 'rollback')),
  output       TEXT NOT NULL,
  completed_at INTEGER NOT NULL,
  -- A key embeds its run id, so (run_id, key) is unique exactly when key is.
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

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
  run_id     TEXT NOT NULL REFERENCES runs (id),
  retired_at INTEGER NOT NULL
) WITHOUT ROWID;
