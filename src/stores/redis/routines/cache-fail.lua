-- cache-fail.lua: CachePort.fail, a build ends without a value.
-- Keys: the entry of (cache, key) and its index places (lib-cache.lua).
-- ARGV: [2] cache, [3] key, [4] token, [5] '1' for a permanent failure else '0',
--   [6] error (JSON text) and [7] ttl ms (whole, >= 0) of a permanent failure.
-- Result: true when the token was the builder token; false, changing nothing, otherwise.
-- Invariant: a permanent failure leaves a negative (`failed`) entry without builder for ttl; a
--   transient one removes a `building` entry (the next caller builds afresh) or ends the
--   revalidation of a `ready` entry, which keeps its old value and times.

local id = ARGV[2] .. '\0' .. ARGV[3]
local e = hgetall(k_cache_entry(id))
if e.builderToken == nil or e.builderToken ~= ARGV[4] then return ok(false) end
local now = now_ms()
if ARGV[5] ~= '1' and e.status == 'building' then
  cache_drop(id)
  return ok(true)
end
e.builderOwner, e.builderToken, e.builderFence, e.builderUntil = false, false, false, false
e.updatedAt = int(now)
if ARGV[5] == '1' then
  e.status, e.value, e.error = 'failed', false, ARGV[6]
  e.expiresAt, e.staleUntil = int(now + tonumber(ARGV[7])), false
end
cache_put(id, e)
return ok(true)
