-- locks-get.lua: LocksPort.get. Reads only.
-- Keys: lock:<key> (lib-keys.lua).
-- ARGV: [2] key.
-- Result: the lock's flat HGETALL (the client drops the token), or null when absent.

local flat = redis.call('HGETALL', k_lock(ARGV[2]))
if #flat == 0 then return ok(nil) end
return ok(flat)
