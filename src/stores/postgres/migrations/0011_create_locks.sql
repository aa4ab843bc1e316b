-- 0011_create_locks: named locks with fences, jobs that wait for one, and completions fenced by
-- the lock they ran under.
--
-- Creates: table locks (0010 dropped the unused one of 0002; this one has the columns the locks
-- sub-port reads and writes), index locks_expiry; column jobs.lock_wait_since; attributes
-- commit_item.lock_key and commit_item.lock_fence. Drops apply_publications(json, bigint, bigint):
-- its successor in routines/publications.sql takes the completion's lock as well (CREATE OR
-- REPLACE cannot change arguments). The functions live in routines/ (locks.sql, publications.sql,
-- jobs-commit.sql), applied by migrate() after the migrations.
-- Invariants:
--   * locks: one row per key while a lock on it exists (live, or expired and not reaped yet).
--     `fence` comes from fence_seq, the sequence job leases and cache builders use, so every
--     acquisition by a new owner gets a fence greater than every fence issued before. Only the
--     holder of `token` renews (while expires_at > now) or releases; a lock whose
--     expires_at <= now may be taken over, with a new fence. acquired_at is when the current
--     owner took it (renewals keep it). Keys are COLLATE "C", like every id and key (see 0001).
--   * jobs.lock_wait_since: since when a job waits for its stage's lock (set by a hand-back
--     because the lock was held, kept by the next such hand-back, cleared by any other hand-back
--     and by the commit of an attempt); NULL otherwise. Times are epoch ms of the store clock.
--   * commit_item.lock_key/lock_fence: the lock a completion ran under (NULL for none); its
--     publications are refused unless that fence is still the lock's current fence.
-- Append-only once released: change these objects in a later migration.

CREATE TABLE locks (
  key         text COLLATE "C" PRIMARY KEY,
  owner       text NOT NULL,
  token       text NOT NULL,
  fence       bigint NOT NULL,
  acquired_at bigint NOT NULL,
  expires_at  bigint NOT NULL
);
CREATE INDEX locks_expiry ON locks (expires_at);

ALTER TABLE jobs ADD COLUMN lock_wait_since bigint;

ALTER TYPE commit_item ADD ATTRIBUTE lock_key text COLLATE "C", ADD ATTRIBUTE lock_fence bigint;

DROP FUNCTION IF EXISTS apply_publications(json, bigint, bigint);
