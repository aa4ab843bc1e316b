-- 0008_create_version_counters: version counters, and runs listed by subject alone.
--
-- Creates: table version_counters; index runs_subject_id. No functions: allocateVersion is one
-- statement (INSERT ... ON CONFLICT DO UPDATE ... RETURNING).
-- Runs with search_path set to the store's schema (see 0001).
-- Invariants:
--   * version_counters: one row per (scope, key) ever allocated; `value` is the last value
--     handed out (1 on first use). allocateVersion inserts the row or, when it exists, updates
--     it under its row lock: concurrent callers queue on that lock and each increments the
--     version the previous one committed, so no value is handed out twice across processes and
--     hosts. Rows are never deleted: a deleted asset that comes back continues its count rather
--     than reusing a version.
--   * runs_subject_id: listRuns by subject (every version of one asset, any pipeline) walks the
--     subject's runs newest first. runs_subject (0001) leads with pipeline, so it cannot serve a
--     subject alone. Only runs with a subject are indexed.
--   * Keys are COLLATE "C", times epoch ms (see 0001).
-- Append-only once released: change these objects in a later migration.

CREATE TABLE version_counters (
  scope      text COLLATE "C" NOT NULL,
  key        text COLLATE "C" NOT NULL,
  value      bigint NOT NULL CHECK (value >= 1),
  updated_at bigint NOT NULL,
  PRIMARY KEY (scope, key)
);

CREATE INDEX runs_subject_id ON runs (subject_id, id) WHERE subject_id IS NOT NULL;
