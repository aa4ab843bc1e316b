-- migrate-3-runs-in-flight.lua: layout 2 -> 3, in one atomic step (migrate.ts runs it before the
-- version is set). Layout 3 adds the inflight:<tenant> sets that admission counts (lib-keys.lua);
-- every status change of a run keeps them in step (JOBS.track_in_flight), so this step only
-- fills them for the runs a layout-2 kiln left queued or running.
-- Keys (P = KEYS[1]): meta, runs, run:<id>, inflight:<tenant>, inflight.
-- ARGV[2]: now (ms, text).
-- Result: the version found before (text); the step applies only to a store at version 2.
-- Invariant: afterwards a run is a member of its tenant's set exactly while queued or running.
local meta = k('meta')
local current = redis.call('HGET', meta, 'schema_version')
if current ~= '2' then return current or '0' end
for _, id in ipairs(redis.call('ZRANGE', k('runs'), 0, -1)) do
  local f = redis.call('HMGET', k_run(id), 'status', 'tenant')
  if f[1] == 'queued' or f[1] == 'running' then redis.call('SADD', k_inflight(f[2] or nil), id) end
end
redis.call('HSET', meta, 'schema_version', '3', 'migrated_at', ARGV[2])
return '2'
