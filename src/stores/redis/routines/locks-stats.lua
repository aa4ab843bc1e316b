-- locks-stats.lua: LocksPort.stats. Reads only.
-- Keys: locks (lib-keys.lua), lock:<key>.
-- ARGV: none.
-- Result: {held, expired, oldestHeldAgeMs} as decimal text, at now: live locks (expiresAt > now),
--   expired ones not reaped yet, and now - the smallest acquiredAt of the live ones (0 when none).

local now = now_ms()
local expired = redis.call('ZCOUNT', k('locks'), '-inf', int(now))
local live = redis.call('ZRANGE', k('locks'), '(' .. int(now), '+inf', 'BYSCORE')
local oldest = 0
for _, key in ipairs(live) do
  local age = now - tonumber(redis.call('HGET', k_lock(key), 'acquiredAt'))
  if age > oldest then oldest = age end
end
return ok({ int(#live), int(expired), int(oldest) })
