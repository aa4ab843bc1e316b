-- 0006_create_cache_request_tables: the single-flight cache and remembered client requests.
--
-- Creates: tables cache_entries, request_records; functions cache_decision, acquire_cache_entry,
-- remember_request. Runs with search_path set to the backend's schema (see 0001); every function
-- is created with `SET search_path FROM CURRENT` (see 0003).
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
--     * The decision is cache_decision's, in one place: fresh means now < expires_at, a builder
--       lease is live while now < builder_until (as job leases).
--
-- remember_request(p_scope, p_key, p_hash, p_value, p_now)
--   In:  the request's scope, key, hash and value (JSON); p_now as above.
--   Out: one row: created (this call stored it), stored (the stored request_records row).
--   Invariant: the first request of a (scope, key) is stored once and never changed; a caller
--   that loses the insert race waits for the winner's commit and reads its row (a new statement,
--   so READ COMMITTED sees that commit).
--
-- Table invariants:
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

-- What an acquire finds in `p_entry` at `p_now`: something to report as is (hit, negative,
-- building, stale while another caller revalidates), or a builder lease to take (build, or
-- revalidate a stale value that stays servable meanwhile). NULL comparisons count as false.
CREATE FUNCTION cache_decision(p_entry cache_entries, p_now bigint) RETURNS text
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

CREATE FUNCTION acquire_cache_entry(p_cache text, p_key text, p_owner text, p_token text, p_lease_ms bigint, p_now bigint,
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

CREATE FUNCTION remember_request(p_scope text, p_key text, p_hash text, p_value json, p_now bigint,
                                 OUT created boolean, OUT stored request_records)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  INSERT INTO request_records (scope, key, request_hash, value, created_at)
  VALUES (p_scope, p_key, p_hash, p_value, coalesce(p_now, floor(extract(epoch FROM now()) * 1000)::bigint))
  ON CONFLICT DO NOTHING
  RETURNING * INTO stored;
  created := FOUND;
  IF NOT created THEN
    -- A new statement: it sees the row of the insert this one waited for.
    SELECT * INTO stored FROM request_records WHERE scope = p_scope AND key = p_key;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'request record (%, %) vanished after a conflicting insert; try again', p_scope, p_key
        USING ERRCODE = '40001';
    END IF;
  END IF;
END
$$;
