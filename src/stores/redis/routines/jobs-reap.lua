-- jobs-reap.lua: jobs.reap, expired leases made ready again, as one atomic script.
--
-- Keys (P = KEYS[1]): queues, leased:<queue>, job:<id>, ready:<queue>:<priority>, prios:<queue>,
--   stages:<runId>, stage:<runId>:<index>.
-- ARGV: none past the time.
-- Result: {redelivered: {queue: count}} (queues with none left out).
-- Invariant: a job whose lease expired (leaseUntil <= now) becomes ready with redeliveries + 1
--   and no lease; its stage record keeps the claim (running, its attempts and start: the claim
--   did not write them, lib-jobs.lua "Stage records") with no lease owner. Cost: one range read per queue plus
--   the expired leases themselves.

local now = now_ms()
local nowText = int(now)
local redelivered = {}
for _, queue in ipairs(redis.call('SMEMBERS', k('queues'))) do
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', k_leased(queue), '-inf', nowText)) do
    local j = JOBS.job(id)
    JOBS.unindex(j)
    JOBS.clear_lease(id)
    j.state = 'ready'
    redis.call('HSET', k_job(id), 'state', 'ready')
    redis.call('HINCRBY', k_job(id), 'redeliveries', 1)
    JOBS.index(j)
    local stageKey = j.kind == 'stage' and JOBS.stage_key(j.runId, j.stage)
    -- The claim counts (and its stage was running: it stays so until it is claimed again).
    if stageKey then
      redis.call('HSET', stageKey, 'status', 'running')
      JOBS.stage_lease_ended(stageKey, j)
    end
    redelivered[queue] = (redelivered[queue] or 0) + 1
  end
end
return ok({ redelivered = redelivered })
