-- stats-queue-activity: recorded activity per queue and minute of a window, and the jobs ready
-- now per queue and age bucket, counted at one instant.
-- Keys: activity, activity:<minute> (lib-stats.lua), queues, prios:<q>, ready:<q>:<priority>.
-- ARGV: [2] bucket width ms, [3] bucket count, [4..] the age bounds (JOB_AGE_BOUNDS_MS, ascending).
-- Result: { now = int text, activity = [[queue, bucket, completed, failed], ...] (one per queue
--   and minute), ready = [[queue, age bucket, count], ...] (counts > 0) }.
-- Cost: the window's minutes (at most a day's) and, per queue and priority, one ZCOUNT per age
--   bucket; no job is read.
-- Invariant: reads only. The window starts at (floor(now / width) - (count - 1)) * width, as
--   activityWindow (core/ports/stats.ts) computes it from the returned now.
local now = now_ms()
local width, count = tonumber(ARGV[2]), tonumber(ARGV[3])
local from = (math.floor(now / width) - (count - 1)) * width
local activity = {}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', k('activity'), int(from), '+inf')) do
  local bucket = math.floor((tonumber(m) - from) / width)
  local counts = {}
  local flat = redis.call('HGETALL', k_activity_minute(m))
  for i = 1, #flat, 2 do
    local queue = string.sub(flat[i], 3)
    local row = counts[queue]
    if not row then
      row = { queue, bucket, 0, 0 }
      counts[queue] = row
      activity[#activity + 1] = row
    end
    if string.sub(flat[i], 1, 2) == 'c:' then row[3] = tonumber(flat[i + 1]) else row[4] = tonumber(flat[i + 1]) end
  end
end

-- Age bucket i holds availableAt in (now - bound[i], now - bound[i-1]]; the last one the rest.
local edges = { int(now) }
for i = 4, #ARGV do edges[#edges + 1] = int(now - tonumber(ARGV[i])) end
local ready = {}
for _, queue in ipairs(redis.call('SMEMBERS', k('queues'))) do
  local priorities = redis.call('ZRANGE', k_prios(queue), 0, -1)
  for bucket = 1, #edges do
    local n = 0
    local min = bucket < #edges and ('(' .. edges[bucket + 1]) or '-inf'
    for _, priority in ipairs(priorities) do n = n + redis.call('ZCOUNT', k_ready(queue, priority), min, edges[bucket]) end
    if n > 0 then ready[#ready + 1] = { queue, bucket - 1, n } end
  end
end
return ok({ now = int(now), activity = activity, ready = ready })
