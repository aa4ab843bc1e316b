-- jobs-release.lua: jobs.release, held jobs handed back unworked, as one atomic script.
--
-- Keys (P = KEYS[1]): job:<id>, leased:<queue>, ready:<queue>:<priority>, prios:<queue>, the
--   fair-claim entries of a ready job (tready:, tenants:, retries:; see lib-jobs.lua),
--   stages:<runId>, stage:<runId>:<index>.
-- ARGV[2]: JSON array of releases: {jobId, token, delayMs (text), lockWait (boolean)}.
-- Result: {released (count), wake: [queues made ready now]}.
-- Invariants: only the holder of the current token hands back (an expired lease not yet
--   reclaimed is still the caller's, and handing it back early is harmless); the claim's attempt
--   is not counted (job attempt - 1; the stage record, which the claim did not write, pending
--   with the attempts of the claims before);
--   lockWaitSince is kept (or set to now) for a lock wait, cleared by any other hand-back.

local leases = cjson.decode(ARGV[2])
local now = now_ms()
local released, woken = 0, {}
for _, lease in ipairs(leases) do
  local j = JOBS.job(lease.jobId)
  if j and j.state == 'leased' and j.leaseToken == lease.token then
    local jobKey = k_job(j.id)
    local delay = math.max(0, tonumber(lease.delayMs or '0'))
    JOBS.unindex(j)
    JOBS.clear_lease(j.id)
    j.state = 'ready'
    j.availableAt = int(now + delay)
    j.attempt = int(math.max(0, tonumber(j.attempt) - 1))
    redis.call('HSET', jobKey, 'state', 'ready', 'attempt', j.attempt, 'availableAt', j.availableAt)
    if lease.lockWait == true then
      redis.call('HSETNX', jobKey, 'lockWaitSince', int(now))
    else
      redis.call('HDEL', jobKey, 'lockWaitSince')
    end
    JOBS.index(j)
    local stageKey = j.kind == 'stage' and JOBS.stage_key(j.runId, j.stage)
    if stageKey then
      redis.call('HSET', stageKey, 'status', 'pending')
      j.attempt = int(math.max(0, tonumber(j.attempt) - 1))
      JOBS.stage_lease_ended(stageKey, j)
    end
    if delay == 0 then woken[j.queue] = true end
    released = released + 1
  end
end
local wake = {}
for queue in pairs(woken) do wake[#wake + 1] = queue end
return ok({ released = released, wake = wake })
