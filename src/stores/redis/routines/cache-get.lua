-- cache-get.lua: CachePort.get. Reads only.
-- Keys: the entry of (cache, key) (lib-cache.lua).
-- ARGV: [2] cache, [3] key.
-- Result: the entry's flat HGETALL, or null when absent.

local flat = redis.call('HGETALL', k_cache_entry(ARGV[2] .. '\0' .. ARGV[3]))
if #flat == 0 then return ok(nil) end
return ok(flat)
