-- stats-record-activity: adds counts to the current minute of their queues, then removes the
-- minutes older than the retention.
-- Keys: activity, activity:<minute> (lib-stats.lua).
-- ARGV: [2] retention ms, then triples [queue, completed, failed] (summed per queue by the
--   client, at least one).
-- Result: null.
-- Invariant: a minute's hash exists exactly while its member is in `activity`; no minute older
--   than the retention (store clock) survives a call.
local now = now_ms()
local retention = tonumber(ARGV[2])
local minute = math.floor(now / 60000) * 60000
local hash = k_activity_minute(int(minute))
for i = 3, #ARGV, 3 do
  local queue, completed, failed = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  if completed > 0 then redis.call('HINCRBY', hash, 'c:' .. queue, completed) end
  if failed > 0 then redis.call('HINCRBY', hash, 'f:' .. queue, failed) end
end
redis.call('ZADD', k('activity'), minute, int(minute))
local oldest = math.floor((now - retention) / 60000) * 60000
local expired = redis.call('ZRANGEBYSCORE', k('activity'), '-inf', '(' .. int(oldest))
for _, m in ipairs(expired) do redis.call('DEL', k_activity_minute(m)) end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', k('activity'), '-inf', '(' .. int(oldest)) end
return ok(nil)
