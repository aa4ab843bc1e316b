-- 0004_create_version_counters: version counters, and runs listed by subject alone.
--
-- Creates: table version_counters; index runs_subject_id.
-- Invariants:
--   * version_counters: one row per (scope, key) ever allocated; `value` is the last value
--     handed out (1 on first use). allocateVersion increments it with one upsert inside its
--     BEGIN IMMEDIATE transaction (the database write lock), so no value is handed out twice
--     across all processes sharing the file. Rows are never deleted: a deleted asset that comes
--     back continues its count rather than reusing a version.
--   * runs_subject_id: listRuns by subject (every version of one asset, any pipeline) walks the
--     subject's runs newest first. runs_subject (0001) leads with pipeline, so it cannot serve a
--     subject alone. Only runs with a subject are indexed, and neither column ever changes, so
--     status moves never rewrite it.
--   * Times are epoch milliseconds from the backend's clock.
-- Append-only once released: add 0005_... instead of editing this file.

CREATE TABLE version_counters (
  scope      TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      INTEGER NOT NULL CHECK (value >= 1),
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID;

CREATE INDEX runs_subject_id ON runs (subject_id, id) WHERE subject_id IS NOT NULL;
