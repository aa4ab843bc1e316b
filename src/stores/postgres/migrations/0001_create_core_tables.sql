-- 0001_create_core_tables: the tables every store method works on.
--
-- Creates: runs, stage_records, jobs, ledger, queues, fence_seq, retired_jobs.
-- Runs inside the migration transaction with search_path set to the store's schema (and
-- pg_temp last), so every object lands in that schema; nothing here names a schema.
-- Invariants:
--   * Ids, keys and queue names are COLLATE "C": byte order, the order ids are generated in
--     (listings by id are listings by age, as in every store), and cheaper comparisons.
--   * Times are epoch milliseconds (bigint), from the database clock in production (or the
--     injected test clock, passed in as a parameter). JSON values are `json` (kept verbatim: key
--     order and text as written, unlike jsonb).
--   * Indexes are the ones the hot path (submit, claim, commit) or an operator query with no
--     cheap alternative needs; each says which.
--   * At most one live (non-dead) job per idempotency key: jobs_live_key is a partial UNIQUE
--     index. Enqueues use INSERT ... ON CONFLICT DO NOTHING, so a duplicate live key collapses
--     into the first job. Keys embed their run id (core/keys.ts), so leading with run_id changes
--     nothing about uniqueness.
--   * A run has at most one live job at a time (every port operation keeps it so); row locks are
--     always taken on jobs before their run, so claims, commits and operator moves never wait on
--     each other in a cycle.
--   * Submission idempotency keys are unique per pipeline: runs_idempotency_key.
--   * fence_seq issues every fence (job claims, cache builders): strictly increasing across all
--     processes; a rolled-back claim leaves a gap, never a repeat.
--   * ledger.seq numbers a run's entries 0, 1, ... in completion order; readLedger sorts by it.
--   * retired_jobs remembers jobs deleted because their run was cancelled, superseded or drained,
--     so a worker still holding one is told `cancelled` rather than `lease_lost`.
-- Append-only once released: add a later migration instead of editing this file.

CREATE TABLE runs (
  id               text COLLATE "C" PRIMARY KEY,
  pipeline         text NOT NULL,
  pipeline_version integer NOT NULL,
  status           text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed',
                     'dead_lettered', 'cancelled', 'superseded', 'parked')),
  current_stage    text,
  input            json NOT NULL,
  input_checksum   text NOT NULL,
  idempotency_key  text,
  subject_id       text,
  subject_version  bigint,
  tenant           text,
  trace_id         text,
  error            json,
  created_at       bigint NOT NULL,
  updated_at       bigint NOT NULL,
  finished_at      bigint
);
-- submitRun: idempotent submission (only runs submitted with a key).
CREATE UNIQUE INDEX runs_idempotency_key ON runs (pipeline, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- submitRun: supersession (only runs with a subject).
CREATE INDEX runs_subject ON runs (pipeline, subject_id, subject_version) WHERE subject_id IS NOT NULL;
-- listRuns by status, for the statuses that need an operator: few runs among many, and never
-- written on the happy path. Other statuses walk the primary key newest first.
CREATE INDEX runs_status ON runs (status, id)
  WHERE status IN ('failed', 'dead_lettered', 'cancelled', 'superseded', 'parked');

CREATE TABLE stage_records (
  run_id          text COLLATE "C" NOT NULL REFERENCES runs (id),
  stage           text NOT NULL,
  stage_index     integer NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed',
                    'dead_lettered', 'skipped')),
  attempts        integer NOT NULL DEFAULT 0,
  output          json,
  error           json,
  progress        json,
  lease_owner     text,
  lease_until     bigint,
  rollback_status text CHECK (rollback_status IN ('pending', 'succeeded', 'dead_lettered')),
  started_at      bigint,
  finished_at     bigint,
  duration_ms     double precision,
  PRIMARY KEY (run_id, stage)
);

CREATE TABLE jobs (
  id              text COLLATE "C" PRIMARY KEY,
  run_id          text COLLATE "C" NOT NULL REFERENCES runs (id),
  pipeline        text NOT NULL,
  stage           text NOT NULL,
  queue           text COLLATE "C" NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('stage', 'rollback')),
  state           text NOT NULL CHECK (state IN ('ready', 'leased', 'parked', 'dead')),
  idempotency_key text COLLATE "C" NOT NULL,
  attempt         integer NOT NULL DEFAULT 0,
  max_attempts    integer NOT NULL,
  priority        integer NOT NULL,
  available_at    bigint NOT NULL,
  enqueued_at     bigint NOT NULL,
  tenant          text,
  trace_id        text,
  lease_owner     text,
  lease_token     text,
  fence           bigint,
  lease_until     bigint,
  lease_ms        bigint,
  redeliveries    integer NOT NULL DEFAULT 0,
  last_error      json
);
-- Enqueue dedup: at most one live job per key (see above).
CREATE UNIQUE INDEX jobs_live_key ON jobs (run_id, idempotency_key) WHERE state <> 'dead';
-- Every "jobs of this run" lookup, dead jobs included (cancel, supersede, resume, listJobs).
CREATE INDEX jobs_run ON jobs (run_id);
-- claimJobs walks this in claim order within one queue; it holds ready jobs only, so leased,
-- parked and dead jobs never slow a claim down.
CREATE INDEX jobs_ready ON jobs (queue, priority, available_at, id) WHERE state = 'ready';
-- claimJobs (redeliveries) and the reaper find expired leases without scanning ready jobs.
CREATE INDEX jobs_lease_expiry ON jobs (lease_until) WHERE state = 'leased';

CREATE TABLE ledger (
  run_id       text COLLATE "C" NOT NULL REFERENCES runs (id),
  key          text COLLATE "C" NOT NULL,
  seq          integer NOT NULL,
  stage        text NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('stage', 'rollback')),
  output       json NOT NULL,
  completed_at bigint NOT NULL,
  -- A key embeds its run id, so (run_id, key) is unique exactly when key is.
  PRIMARY KEY (run_id, key)
);

CREATE TABLE queues (
  name       text COLLATE "C" PRIMARY KEY,
  paused     boolean NOT NULL DEFAULT false,
  updated_at bigint NOT NULL
);

CREATE SEQUENCE fence_seq AS bigint;

CREATE TABLE retired_jobs (
  job_id     text COLLATE "C" PRIMARY KEY,
  run_id     text COLLATE "C" NOT NULL REFERENCES runs (id),
  retired_at bigint NOT NULL
);
