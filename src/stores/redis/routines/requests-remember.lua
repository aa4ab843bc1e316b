-- requests-remember.lua: RequestsPort.remember.
-- Keys: the record of (scope, key) and requests:created (lib-requests.lua).
-- ARGV: [2] scope, [3] key, [4] requestHash, [5] value (JSON text).
-- Result: {created, record}: whether this call stored it, and the stored record's flat HGETALL.
-- Invariant: the first request of (scope, key) is stored once (check and write in one script)
--   and never changed; every later one gets it back.

local key = k_request(ARGV[2], ARGV[3])
if redis.call('EXISTS', key) == 1 then return ok({ false, redis.call('HGETALL', key) }) end
redis.call('HSET', key, 'scope', ARGV[2], 'key', ARGV[3], 'requestHash', ARGV[4], 'value', ARGV[5], 'createdAt', int(now_ms()))
redis.call('ZADD', k_requests_created(), int(now_ms()), ARGV[2] .. '\0' .. ARGV[3])
return ok({ true, redis.call('HGETALL', key) })
