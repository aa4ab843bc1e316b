-- locks-release.lua: LocksPort.release.
-- Keys: lock:<key>, locks, locks:bykey (lib-keys.lua, lib-locks.lua).
-- ARGV: [2] key, [3] token.
-- Result: 'released' when the token held the lock (expired but not taken over or reaped counts),
--   now removed; 'not_owner', changing nothing, otherwise.

local token = redis.call('HGET', k_lock(ARGV[2]), 'token')
if not token or token ~= ARGV[3] then return ok('not_owner') end
lock_drop(ARGV[2])
return ok('released')
