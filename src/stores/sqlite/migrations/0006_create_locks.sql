-- 0006_create_locks: named locks with fences, and jobs that wait for one.
--
-- Creates: table locks; column jobs.lock_wait_since. (0005 dropped the unused locks table of
-- 0002; this one has the columns the locks sub-port reads and writes.)
-- Invariants:
--   * locks: one row per key while a lock on it exists (live, or expired and not reaped yet).
--     `fence` comes from fence_counter (0001), the sequence job leases and cache builders use, so
--     every acquisition by a new owner gets a fence greater than every fence issued before.
--     Acquire, renew, release and reap each run inside one BEGIN IMMEDIATE transaction (the
--     database write lock), so of any number of acquirers of a free key in any number of
--     processes exactly one takes it. Only the holder of `token` renews (while expires_at > now)
--     or releases; a lock whose expires_at <= now may be taken over, with a new fence.
--   * acquired_at is when the current owner took the lock (renewals keep it): the oldest held
--     lock's age is now - min(acquired_at) over live locks (locks_expiry serves both scans).
--   * jobs.lock_wait_since: since when a job waits for its stage's lock (set by a hand-back
--     because the lock was held, kept by the next such hand-back, cleared by any other hand-back
--     and by the commit of an attempt); NULL otherwise. Times are epoch ms of the store clock.
-- Append-only once released: add 0007_... instead of editing this file.

CREATE TABLE locks (
  key         TEXT PRIMARY KEY,
  owner       TEXT NOT NULL,
  token       TEXT NOT NULL,
  fence       INTEGER NOT NULL,
  acquired_at INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX locks_expiry ON locks (expires_at);

ALTER TABLE jobs ADD COLUMN lock_wait_since INTEGER;
