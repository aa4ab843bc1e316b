-- 0010_create_api_tokens: API tokens of the HTTP API (the tokens sub-port).
--
-- Creates: table api_tokens.
-- Invariants:
--   * One row per token ever created; rows are never deleted (a revoked token keeps its row, so
--     "any token exists" never goes back to false and revoking the last token cannot open a
--     server again).
--   * secret_hash is the sha256 hex of the whole secret; the secret itself is never stored.
--     Unique: a presented token is found by its hash in one indexed read.
--   * scopes: comma-separated, canonical order (read,submit,operate,admin), at least one.
--   * revoked_at is set once (the first revoke) and never changed or cleared; expires_at is set
--     at creation only. Times are epoch milliseconds of the store clock.
-- Append-only once released: add 0011_... instead of editing this file.

CREATE TABLE api_tokens (
  id          TEXT PRIMARY KEY,
  tenant      TEXT NOT NULL,
  name        TEXT,
  scopes      TEXT NOT NULL CHECK (scopes <> ''),
  secret_hash TEXT NOT NULL UNIQUE,
  last4       TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER,
  revoked_at  INTEGER
) WITHOUT ROWID;
