-- cache-renew.lua: CachePort.renew, a builder's heartbeat.
-- Keys: the entry of (cache, key) and its index places (lib-cache.lua).
-- ARGV: [2] cache, [3] key, [4] token, [5] lease ms (whole, >= 0).
-- Result: true when the token held a live builder lease, now extended to now + lease ms; false,
--   changing nothing, otherwise.
-- Invariant: the rule of job leases and of the SQL stores: an expired lease is no longer held
--   (its builder may still complete while nobody took it over, but not extend it).

local id = ARGV[2] .. '\0' .. ARGV[3]
local e = hgetall(k_cache_entry(id))
local now = now_ms()
if e.builderToken == nil or e.builderToken ~= ARGV[4] or not (tonumber(e.builderUntil) > now) then return ok(false) end
e.builderUntil, e.updatedAt = int(now + tonumber(ARGV[5])), int(now)
cache_put(id, e)
return ok(true)
