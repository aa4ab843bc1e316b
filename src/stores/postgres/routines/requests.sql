-- routines/requests.sql: remembered client requests (`Idempotency-Key`).
--
-- Re-applied by migrate() (migrate.ts) whenever this file's sha256 changes; created with
-- `SET search_path FROM CURRENT` (the store's schema, then pg_temp; see routines/cache.sql).
--
-- remember_request(p_scope text, p_key text, p_hash text, p_value json, p_now bigint)
--   In:  the request's scope, key, hash and value (JSON); p_now epoch ms (NULL: the database clock).
--   Out: one row: created (this call stored it), stored (the stored request_records row).
--   Invariant: the first request of a (scope, key) is stored once and never changed; a caller
--   that loses the insert race waits for the winner's commit and reads its row (a new statement,
--   so READ COMMITTED sees that commit).

CREATE OR REPLACE FUNCTION remember_request(p_scope text, p_key text, p_hash text, p_value json, p_now bigint,
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
