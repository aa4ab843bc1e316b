-- routines/locks.sql: taking a named lock, and whether a lock fence is still current.
--
-- Re-applied by migrate() (migrate.ts) whenever this file's sha256 changes; created with
-- `SET search_path FROM CURRENT` (the store's schema, then pg_temp; see routines/cache.sql).
--
-- acquire_lock(p_key, p_owner, p_token, p_ttl_ms, p_now) -> (acquired boolean, entry locks)
--   In:  the key; the caller's owner name and token; the TTL in ms; p_now epoch ms (NULL: the
--        database clock).
--   Out: one row: acquired (true when the caller holds the lock now), entry (the locks row as it
--        is after the call: the caller's, or the live holder's).
--   Invariants:
--     * Exactly one holder per key at a time, across every process: one upsert takes the key
--       when it is free (the insert), expired, or already the caller's (the update); ON CONFLICT
--       locks the existing row before deciding, so of concurrent acquirers one wins and the
--       others decide on its committed row.
--     * A new holder gets nextval('fence_seq'), shared with job and cache builder fences: strictly
--       increasing. The caller's own lock keeps its fence and acquired_at (a retried acquire).
--       A refused insert may use up a sequence value: fences have gaps, never repeats.
--     * When refused, the holder's row is read under the row lock the upsert took, so it is the
--       live holder's (nobody can change it before this transaction ends).
--
-- lock_fence_is_current(p_key, p_fence) -> boolean
--   True when the lock on p_key exists with fence p_fence (its holder may be past its expiry,
--   but nobody took it over and it was not reaped). Reads only; a completion's publications
--   (apply_publications) pass it inside the commit's transaction.

CREATE OR REPLACE FUNCTION acquire_lock(p_key text, p_owner text, p_token text, p_ttl_ms bigint, p_now bigint,
                                        OUT acquired boolean, OUT entry locks)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  v_now bigint := coalesce(p_now, floor(extract(epoch FROM now()) * 1000)::bigint);
BEGIN
  INSERT INTO locks AS l (key, owner, token, fence, acquired_at, expires_at)
  VALUES (p_key, p_owner, p_token, nextval('fence_seq'), v_now, v_now + p_ttl_ms)
  ON CONFLICT (key) DO UPDATE SET
    owner = excluded.owner,
    token = excluded.token,
    fence = CASE WHEN l.token = excluded.token THEN l.fence ELSE excluded.fence END,
    acquired_at = CASE WHEN l.token = excluded.token THEN l.acquired_at ELSE excluded.acquired_at END,
    expires_at = excluded.expires_at
  WHERE l.token = excluded.token OR l.expires_at <= v_now
  RETURNING * INTO entry;
  acquired := FOUND;
  IF NOT acquired THEN
    SELECT * INTO entry FROM locks WHERE key = p_key;
  END IF;
END
$$;

CREATE OR REPLACE FUNCTION lock_fence_is_current(p_key text, p_fence bigint) RETURNS boolean
LANGUAGE sql STABLE
SET search_path FROM CURRENT
AS $$
  SELECT EXISTS (SELECT 1 FROM locks WHERE key = p_key AND fence = p_fence)
$$;
