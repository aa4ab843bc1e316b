-- 0016_create_blobs: small content-addressed objects kept in the database (the blobs sub-port),
-- so an inline artifact is made durable by the same commit as the state that refers to it.
--
-- Creates: table blobs.
-- Invariants:
--   * ref is `sha256:<64 lowercase hex>` of bytes; a row's bytes and media_type never change
--     (a second put of the ref only moves modified_at).
--   * size = length(bytes), kept so list() reads no bytes.
--   * modified_at: the last put, epoch milliseconds of the store clock (garbage collection's
--     grace period); a remove with notModifiedAfter deletes the row only when
--     modified_at <= notModifiedAfter.
--   * A rowid table, not WITHOUT ROWID: rows carry up to artifacts.inlineMaxBytes of bytes.
-- Append-only once released: add a later migration instead of editing this file.

CREATE TABLE blobs (
  ref         TEXT PRIMARY KEY,
  media_type  TEXT NOT NULL,
  size        INTEGER NOT NULL,
  bytes       BLOB NOT NULL,
  modified_at INTEGER NOT NULL
);
