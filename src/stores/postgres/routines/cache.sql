-- routines/cache.sql: the single-flight cache's acquire, as one server-side call.
--
-- Re-applied by migrate() (migrate.ts) whenever this file's sha256 changes. Functions that read
-- tables are created with `SET search_path FROM CURRENT`: migrate() runs this file with the
-- store's schema (then pg_temp) as search_path, so the tables resolve to that schema whatever the
-- caller's search_path is.
--
-- cache_decision(p_entry cache_entries, p_now bigint) -> text
--   What an acquire finds in p_entry at p_now: hit, negative, building, stale (another caller
--   revalidates), revalidate (take the builder lease of a stale value that stays servable
--   meanwhile) or build. Fresh means now < expires_at; a builder lease is live while
--   now < builder_until (as job leases). NULL comparisons count as false. Reads no table.
--
-- acquire_cache_entry(p_cache, p_key, p_owner, p_token, p_lease_ms, p_now)
--   In:  the entry's cache and key; the caller's builder owner and token; its lease in ms;
--        p_now epoch ms (NULL: the database clock).
--   Out: one row: state (hit | stale | negative | building | build), revalidate (true when this
--        caller took the builder lease of a stale entry), entry (the cache_entries row as it is
--        after the call).
--   Invariants:
--     * Exactly one builder per key at a time, across every process: a caller becomes the builder
--       only by inserting the row (ON CONFLICT DO NOTHING: of concurrent inserters one wins, the
--       others wait for its commit and then read its row) or by updating the row under
--       FOR UPDATE after deciding again on that locked, latest version.
--     * A hit, a negative entry, a stale value being revalidated and a build in progress are
--       answered from a plain read: no lock, no write (a cache hit costs one index lookup).
--     * The decision is cache_decision's, in one place.
--     * Builder fences come from fence_seq, shared with job fences: strictly increasing.

CREATE OR REPLACE FUNCTION cache_decision(p_entry cache_entries, p_now bigint) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
  SELECT CASE
    WHEN p_entry.status = 'ready' AND p_now < p_entry.expires_at THEN 'hit'
    WHEN p_entry.status = 'ready' AND p_now < p_entry.stale_until THEN
      CASE WHEN p_now < p_entry.builder_until THEN 'stale' ELSE 'revalidate' END
    WHEN p_entry.status = 'failed' AND p_now < p_entry.expires_at THEN 'negative'
    -- Nothing servable: wait for a live builder (a build, or a revalidation that outlived its
    -- stale window), or build from scratch.
    WHEN p_now < p_entry.builder_until THEN 'building'
    ELSE 'build'
  END
$$;

CREATE OR REPLACE FUNCTION acquire_cache_entry(p_cache text, p_key text, p_owner text, p_token text, p_lease_ms bigint, p_now bigint,
                                    OUT state text, OUT revalidate boolean, OUT entry cache_entries)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  v_now bigint := coalesce(p_now, floor(extract(epoch FROM now()) * 1000)::bigint);
  v_decision text;
BEGIN
  -- Each pass ends in a decision unless the row appeared or vanished between two statements
  -- (a concurrent insert, or housekeeping deleting it): then the next pass reads it again.
  FOR v_pass IN 1..8 LOOP
    SELECT * INTO entry FROM cache_entries WHERE cache = p_cache AND key = p_key;
    IF NOT FOUND THEN
      INSERT INTO cache_entries (cache, key, status, builder_owner, builder_token, builder_fence, builder_until, updated_at)
      VALUES (p_cache, p_key, 'building', p_owner, p_token, nextval('fence_seq'), v_now + p_lease_ms, v_now)
      ON CONFLICT DO NOTHING
      RETURNING * INTO entry;
      IF FOUND THEN
        state := 'build';
        revalidate := false;
        RETURN;
      END IF;
      CONTINUE;
    END IF;
    v_decision := cache_decision(entry, v_now);
    IF v_decision IN ('build', 'revalidate') THEN
      -- Decide again on the locked, latest version: a concurrent caller may have taken it.
      SELECT * INTO entry FROM cache_entries WHERE cache = p_cache AND key = p_key FOR UPDATE;
      IF NOT FOUND THEN
        CONTINUE;
      END IF;
      v_decision := cache_decision(entry, v_now);
      IF v_decision = 'build' THEN
        UPDATE cache_entries SET status = 'building', value = NULL, error = NULL, expires_at = NULL, stale_until = NULL,
          builder_owner = p_owner, builder_token = p_token, builder_fence = nextval('fence_seq'),
          builder_until = v_now + p_lease_ms, updated_at = v_now
        WHERE cache = p_cache AND key = p_key
        RETURNING * INTO entry;
      ELSIF v_decision = 'revalidate' THEN
        -- The stale value and its times stay: it is served while this caller rebuilds it.
        UPDATE cache_entries SET builder_owner = p_owner, builder_token = p_token, builder_fence = nextval('fence_seq'),
          builder_until = v_now + p_lease_ms, updated_at = v_now
        WHERE cache = p_cache AND key = p_key
        RETURNING * INTO entry;
      END IF;
    END IF;
    state := CASE v_decision WHEN 'revalidate' THEN 'stale' ELSE v_decision END;
    revalidate := v_decision = 'revalidate';
    RETURN;
  END LOOP;
  RAISE EXCEPTION 'cache entry (%, %) kept appearing and vanishing; try again', p_cache, p_key
    USING ERRCODE = '40001';
END
$$;
