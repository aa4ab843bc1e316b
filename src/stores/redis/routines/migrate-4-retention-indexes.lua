-- migrate-4-retention-indexes.lua: layout 3 -> 4, in one atomic step (migrate.ts runs it before the
-- version is set). Layout 4 adds what retention walks: finished:<status> (runs by finish time,
-- lib-keys.lua) and requests:created (request records by creation time, lib-requests.lua). Every
-- run that ends and every record remembered from then on is indexed by its own script; this step
-- indexes what a layout-3 kiln left, so retention can prune it too.
-- Keys (P = KEYS[1]): meta, runs, run:<id>, finished:<status>, request:*, requests:created.
-- ARGV[2]: now (ms, text).
-- Result: the version found before (text); the step applies only to a store at version 3.
-- Invariant: afterwards every ended run is in the finished index of its status, scored by its
--   finishedAt (its updatedAt when it has none), and every request record in requests:created.
local meta = k('meta')
local current = redis.call('HGET', meta, 'schema_version')
if current ~= '3' then return current or '0' end
local ENDED = { succeeded = true, failed = true, dead_lettered = true, cancelled = true, superseded = true }
for _, id in ipairs(redis.call('ZRANGE', k('runs'), 0, -1)) do
  local f = redis.call('HMGET', k_run(id), 'status', 'finishedAt', 'updatedAt')
  if f[1] and ENDED[f[1]] then index_finished(id, f[1], f[2] or f[3] or ARGV[2]) end
end
local cursor = '0'
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', P .. 'request:*', 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do
    local r = redis.call('HMGET', key, 'scope', 'key', 'createdAt')
    if r[1] and r[2] then redis.call('ZADD', k_requests_created(), r[3] or ARGV[2], r[1] .. '\0' .. r[2]) end
  end
until cursor == '0'
redis.call('HSET', meta, 'schema_version', '4', 'migrated_at', ARGV[2])
return '3'
