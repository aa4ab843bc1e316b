-- locks-acquire.lua: LocksPort.acquire.
-- Keys: lock:<key>, locks, locks:bykey (lib-keys.lua, lib-locks.lua); meta's fence counter.
-- ARGV: [2] key, [3] owner, [4] token, [5] ttl ms (whole, >= 0).
-- Result: {acquired, lock}: whether the caller holds the lock now, and the lock's flat HGETALL
--   after the call (the caller's, or the live holder's).
-- Invariant: one holder per key at a time, across every process (check and take in one script).
--   A new holder gets next_fence(), shared with job and cache builder fences: strictly
--   increasing. The token's own lock keeps its owner, fence and acquiredAt (a retried acquire)
--   and is extended to now + ttl. A lock is live while now < expiresAt.

local key, owner, token, ttlMs = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local lockKey = k_lock(key)
local now = now_ms()
local stored = hgetall(lockKey)
if stored.token ~= nil and stored.token == token then
  lock_expire(key, now + ttlMs)
  return ok({ true, redis.call('HGETALL', lockKey) })
end
if stored.token ~= nil and tonumber(stored.expiresAt) > now then
  return ok({ false, redis.call('HGETALL', lockKey) })
end
redis.call('DEL', lockKey)
redis.call('HSET', lockKey, 'owner', owner, 'token', token, 'fence', int(next_fence()), 'acquiredAt', int(now))
lock_expire(key, now + ttlMs)
redis.call('ZADD', k_locks_bykey(), 0, key)
return ok({ true, redis.call('HGETALL', lockKey) })
