-- 0006_create_cache_request_tables: the single-flight cache and remembered client requests.
--
-- Creates: tables cache_entries, request_records; index cache_entries_purge. Runs with
-- search_path set to the store's schema (see 0001). The functions over these tables live in
-- routines/ (cache.sql, requests.sql), applied by migrate() after the migrations.
--
-- Invariants:
--   * cache_entries: one row per (cache, key). A `building` row always has a builder lease
--     (owner, token, fence, until), a `ready` row only while it is revalidated, a `failed` row
--     never; the four builder columns are set and cleared together. builder_fence comes from
--     fence_seq (0001): builder fences and job fences share one strictly increasing sequence.
--     A `building` row has no value and no expiry.
--   * cache_entries.purge_at (generated): when the row can no longer be served and no live
--     builder holds it: a ready row's stale_until (or expires_at when it cannot be served stale),
--     pushed back to the end of a revalidating builder's lease; a failed row's expires_at; a
--     building row's builder_until (housekeeping adds its grace to that one). Housekeeping walks
--     cache_entries_purge up to now instead of scanning the table.
--   * request_records: the first request of a (scope, key) is stored once and never changed.
--   * Keys are COLLATE "C", times epoch ms, JSON values `json` (see 0001).
-- Append-only once released: change these objects in a later migration.

CREATE TABLE cache_entries (
  cache         text COLLATE "C" NOT NULL,
  key           text COLLATE "C" NOT NULL,
  status        text NOT NULL CHECK (status IN ('building', 'ready', 'failed')),
  value         json,
  error         json,
  builder_owner text,
  builder_token text COLLATE "C",
  builder_fence bigint,
  builder_until bigint,
  expires_at    bigint,
  stale_until   bigint,
  updated_at    bigint NOT NULL,
  purge_at      bigint GENERATED ALWAYS AS (CASE status
    WHEN 'building' THEN builder_until
    WHEN 'failed' THEN expires_at
    ELSE greatest(coalesce(stale_until, expires_at), builder_until)
  END) STORED,
  PRIMARY KEY (cache, key),
  CHECK ((builder_token IS NULL) = (builder_owner IS NULL)
    AND (builder_token IS NULL) = (builder_fence IS NULL)
    AND (builder_token IS NULL) = (builder_until IS NULL)),
  CHECK (status <> 'building' OR (builder_token IS NOT NULL AND expires_at IS NULL AND stale_until IS NULL)),
  CHECK (status <> 'failed' OR (builder_token IS NULL AND expires_at IS NOT NULL)),
  CHECK (status <> 'ready' OR (value IS NOT NULL AND expires_at IS NOT NULL))
);
-- deleteExpiredCacheEntries: the rows whose purge time has come, without a scan.
CREATE INDEX cache_entries_purge ON cache_entries (purge_at);

CREATE TABLE request_records (
  scope        text COLLATE "C" NOT NULL,
  key          text COLLATE "C" NOT NULL,
  request_hash text NOT NULL,
  value        json NOT NULL,
  created_at   bigint NOT NULL,
  PRIMARY KEY (scope, key)
);

