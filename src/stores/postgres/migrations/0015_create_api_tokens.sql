-- 0015_create_api_tokens: API tokens of the HTTP API (the tokens sub-port).
--
-- Creates: table api_tokens. No functions: each method of the sub-port is one statement
-- (sql/tokens.ts).
-- Runs with search_path set to the store's schema (see 0001).
-- Invariants:
--   * One row per token ever created; rows are never deleted (a revoked token keeps its row, so
--     "any token exists" never goes back to false and revoking the last token cannot open a
--     server again).
--   * secret_hash is the sha256 hex of the whole secret; the secret itself is never stored.
--     Unique: a presented token is found by its hash in one indexed read.
--   * scopes: comma-separated, canonical order (read,submit,operate,admin), at least one.
--   * revoked_at is set once (the first revoke) and never changed or cleared; expires_at is set
--     at creation only. Ids and hashes are COLLATE "C", times epoch ms (see 0001).
-- Append-only once released: change these objects in a later migration.

CREATE TABLE api_tokens (
  id          text COLLATE "C" PRIMARY KEY,
  tenant      text NOT NULL,
  name        text,
  scopes      text NOT NULL CHECK (scopes <> ''),
  secret_hash text COLLATE "C" NOT NULL UNIQUE,
  last4       text NOT NULL,
  created_at  bigint NOT NULL,
  expires_at  bigint,
  revoked_at  bigint
);
