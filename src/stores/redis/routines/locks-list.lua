-- locks-list.lua: LocksPort.list. Reads only.
-- Keys: locks:bykey (lib-locks.lua), lock:<key> (lib-keys.lua).
-- ARGV: [2] limit (whole, 1..1000).
-- Result: {key, flat HGETALL} pairs by key (byte order), expired locks included, at most limit.

local locks = {}
for _, key in ipairs(redis.call('ZRANGE', k_locks_bykey(), '-', '+', 'BYLEX', 'LIMIT', 0, tonumber(ARGV[2]))) do
  locks[#locks + 1] = { key, redis.call('HGETALL', k_lock(key)) }
end
return ok(locks)
