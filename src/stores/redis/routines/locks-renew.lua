-- locks-renew.lua: LocksPort.renew, heartbeats.
-- Keys: lock:<key>, locks (lib-keys.lua).
-- ARGV: from [2], triples key, token, ttl ms (whole, >= 0).
-- Result: one entry per triple, in input order: the new expiresAt as decimal text when the token
--   held a live lock on the key (expiresAt > now), else '' (lost, nothing changed).

local now = now_ms()
local results = {}
for i = 2, #ARGV, 3 do
  local key, token, ttlMs = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local stored = hgetall(k_lock(key))
  if stored.token ~= nil and stored.token == token and tonumber(stored.expiresAt) > now then
    lock_expire(key, now + ttlMs)
    results[#results + 1] = int(now + ttlMs)
  else
    results[#results + 1] = ''
  end
end
return ok(results)
