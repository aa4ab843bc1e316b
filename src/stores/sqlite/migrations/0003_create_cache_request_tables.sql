-- 0003_create_cache_request_tables: storage for the single-flight cache and remembered client
-- requests (Idempotency-Key). Publications use the `publications` table of 0002 unchanged.
--
-- Creates: cache_entries, request_records.
-- Invariants:
--   * cache_entries: one row per (cache, key). `status` is building | ready | failed. A
--     `building` row always has a builder lease (owner, token, fence, until); a `ready` row has
--     one only while it is revalidated; a `failed` row never has one. The four builder columns
--     are set and cleared together. builder_fence comes from fence_counter (0001), so builder
--     fences and job fences share one strictly increasing sequence. Every write of a row runs in
--     one BEGIN IMMEDIATE transaction that read it first, so at most one caller becomes the
--     builder of a key, across all processes sharing the file.
--   * cache_entries.purge_at (generated): the time from which the row can no longer be served and
--     no live builder holds it — a ready row's stale_until (or expires_at when it cannot be
--     served stale), pushed back to the end of a revalidating builder's lease; a failed row's
--     expires_at; a building row's builder_until (housekeeping adds its grace to that one).
--     Housekeeping walks cache_entries_purge up to now instead of scanning the table.
--   * request_records: one row per (scope, key), written once (INSERT ... ON CONFLICT DO NOTHING)
--     and never changed: the first request's hash and value are what later requests get back.
--   * Times are epoch milliseconds from the backend's clock; JSON values are TEXT.
-- Append-only once released: add 0004_... instead of editing this file.

CREATE TABLE cache_entries (
  cache         TEXT NOT NULL,
  key           TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('building', 'ready', 'failed')),
  value         TEXT,
  error         TEXT,
  builder_owner TEXT,
  builder_token TEXT,
  builder_fence INTEGER,
  builder_until INTEGER,
  expires_at    INTEGER,
  stale_until   INTEGER,
  updated_at    INTEGER NOT NULL,
  purge_at      INTEGER GENERATED ALWAYS AS (CASE status
    WHEN 'building' THEN builder_until
    WHEN 'failed' THEN expires_at
    ELSE max(COALESCE(stale_until, expires_at), COALESCE(builder_until, 0))
  END) VIRTUAL,
  PRIMARY KEY (cache, key),
  CHECK ((builder_token IS NULL) = (builder_owner IS NULL)
    AND (builder_token IS NULL) = (builder_fence IS NULL)
    AND (builder_token IS NULL) = (builder_until IS NULL)),
  CHECK (status <> 'building' OR builder_token IS NOT NULL),
  CHECK (status <> 'failed' OR (builder_token IS NULL AND expires_at IS NOT NULL)),
  CHECK (status <> 'ready' OR (value IS NOT NULL AND expires_at IS NOT NULL))
) WITHOUT ROWID;
-- deleteExpiredCacheEntries: the rows whose purge time has come, without a scan.
CREATE INDEX cache_entries_purge ON cache_entries (purge_at);

CREATE TABLE request_records (
  scope        TEXT NOT NULL,
  key          TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  value        TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID;
