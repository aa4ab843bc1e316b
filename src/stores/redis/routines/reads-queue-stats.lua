-- reads-queue-stats: per queue that has jobs or was ever paused or resumed, its jobs by state and the age of its
-- oldest ready job, all counted at one instant.
-- Keys: queues, paused, queues:operated, prios:<q>, ready:<q>:<priority> (score availableAt), leased:<q>,
-- parked:<q>, dead:<q>.
-- ARGV: none beyond the time.
-- Result: { now = int text, queues = [[queue, paused 0|1, ready, scheduled, leased, parked, dead,
--   oldest availableAt among the ready ones or ''], ...] } (counts as numbers, unordered).
-- Cost: a few O(log n) commands per queue and priority; no job is read.
-- Invariant: reads only. A job is `ready` when availableAt <= now, `scheduled` after.
local now = now_ms()
local names = redis.call('SUNION', k('queues'), k('paused'), k('queues:operated'))
local rows = {}
for _, queue in ipairs(names) do
  local paused = redis.call('SISMEMBER', k('paused'), queue)
  local ready, scheduled, oldest = 0, 0, nil
  for _, priority in ipairs(redis.call('ZRANGE', k_prios(queue), 0, -1)) do
    local key = k_ready(queue, priority)
    ready = ready + redis.call('ZCOUNT', key, '-inf', int(now))
    scheduled = scheduled + redis.call('ZCOUNT', key, '(' .. int(now), '+inf')
    local first = redis.call('ZRANGEBYSCORE', key, '-inf', int(now), 'WITHSCORES', 'LIMIT', 0, 1)
    if #first > 0 then
      local at = tonumber(first[2])
      if oldest == nil or at < oldest then oldest = at end
    end
  end
  local leased = redis.call('ZCARD', k_leased(queue))
  local parked = redis.call('ZCARD', k_parked(queue))
  local dead = redis.call('ZCARD', k_dead(queue))
  if paused == 1 or redis.call('SISMEMBER', k('queues:operated'), queue) == 1 or ready + scheduled + leased + parked + dead > 0 then
    rows[#rows + 1] = { queue, paused, ready, scheduled, leased, parked, dead, oldest and int(oldest) or '' }
  end
end
return ok({ now = int(now), queues = rows })
