-- locks-reap.lua: LocksPort.reap.
-- Keys: locks, lock:<key> (lib-keys.lua), locks:bykey (lib-locks.lua).
-- ARGV: none.
-- Result: how many expired locks (expiresAt <= now) were removed, as decimal text.
-- Invariant: a later acquirer takes a new fence either way, so reaping never lowers a fence.

local expired = redis.call('ZRANGE', k('locks'), '-inf', int(now_ms()), 'BYSCORE')
for _, key in ipairs(expired) do lock_drop(key) end
return ok(int(#expired))
