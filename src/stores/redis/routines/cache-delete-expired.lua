-- cache-delete-expired.lua: CachePort.deleteExpired, housekeeping.
-- Keys: the purge index and the entries (lib-cache.lua).
-- ARGV: [2] grace ms (whole, >= 0).
-- Result: how many entries were deleted, as decimal text.
-- Invariant: deletes exactly the entries that can no longer be served and have no live builder
--   (purge time <= now, walked on the purge index), except `building` entries whose builder lease
--   expired grace ms ago or less (the builder may still complete).

local now = now_ms()
local graceMs = tonumber(ARGV[2])
local due = redis.call('ZRANGE', k_cache_purge(), '-inf', int(now), 'BYSCORE', 'WITHSCORES')
local deleted = 0
for i = 1, #due, 2 do
  local id, purge = due[i], tonumber(due[i + 1])
  if redis.call('HGET', k_cache_entry(id), 'status') ~= 'building' or purge < now - graceMs then
    cache_drop(id)
    deleted = deleted + 1
  end
end
return ok(int(deleted))
