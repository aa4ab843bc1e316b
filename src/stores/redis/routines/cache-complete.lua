-- cache-complete.lua: CachePort.complete, a build ends with a value.
-- Keys: the entry of (cache, key) and its index places (lib-cache.lua).
-- ARGV: [2] cache, [3] key, [4] token, [5] value (JSON text), [6] ttl ms, [7] stale ms (whole, >= 0).
-- Result: true when stored; false, changing nothing, when token is not the builder token.
-- Invariant: only the current builder token ends a build, whatever its lease end (nobody took it
--   over, or the token would differ); the builder lease is cleared with it.

local id = ARGV[2] .. '\0' .. ARGV[3]
local e = hgetall(k_cache_entry(id))
if e.builderToken == nil or e.builderToken ~= ARGV[4] then return ok(false) end
local now = now_ms()
local expiresAt = now + tonumber(ARGV[6])
local staleMs = tonumber(ARGV[7])
e.status, e.value, e.error = 'ready', ARGV[5], false
e.builderOwner, e.builderToken, e.builderFence, e.builderUntil = false, false, false, false
e.expiresAt, e.updatedAt = int(expiresAt), int(now)
e.staleUntil = staleMs > 0 and int(expiresAt + staleMs)
cache_put(id, e)
return ok(true)
