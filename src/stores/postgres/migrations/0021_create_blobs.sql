-- 0021_create_blobs: small content-addressed objects kept in the database (the blobs sub-port),
-- so an inline artifact is made durable by a commit of the store, like the state referring to it.
--
-- Creates: table blobs. No functions: each method of the sub-port is one statement (sql/blobs.ts).
-- Runs with search_path set to the store's schema (see 0001).
-- Invariants:
--   * ref is `sha256:<64 lowercase hex>` of bytes (COLLATE "C": listing by ref is byte order);
--     a row's bytes and media_type never change (a second put of the ref only moves modified_at).
--   * size = octet_length(bytes), kept so a listing reads no bytes.
--   * modified_at: the last put, epoch ms (see 0001); a remove with notModifiedAfter deletes the
--     row only when modified_at <= notModifiedAfter (garbage collection's grace period).
-- Append-only once released: change these objects in a later migration.

CREATE TABLE blobs (
  ref         text COLLATE "C" PRIMARY KEY,
  media_type  text NOT NULL,
  size        integer NOT NULL,
  bytes       bytea NOT NULL,
  modified_at bigint NOT NULL
);
