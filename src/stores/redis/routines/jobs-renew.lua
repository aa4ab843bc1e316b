-- jobs-renew.lua: jobs.renew, heartbeats of held leases as one atomic script.
--
-- Keys (P = KEYS[1]): job:<id>, jobrun, run:<id>, leased:<queue>, stages:<runId>,
--   stage:<runId>:<index>.
-- ARGV[2]: JSON array of renewals, in order: {jobId, token, progress? (JSON text)}.
-- Result: [{status 'renewed', leaseUntil} | {status 'lost'} | {status 'cancelled'}], in order.
-- Invariant: only a lease still held (token matches, leased, not expired) is extended, by the
--   leaseMs granted at claim; the job's leased:<queue> score follows its leaseUntil.

local renewals = cjson.decode(ARGV[2])
local now = now_ms()
local statuses = {}
for i, renewal in ipairs(renewals) do
  local j, refusal = JOBS.check_lease(renewal.jobId, renewal.token, now)
  if j == nil then
    statuses[i] = { status = refusal }
  else
    local leaseUntil = int(now + tonumber(j.leaseMs or '0'))
    redis.call('HSET', k_job(j.id), 'leaseUntil', leaseUntil)
    redis.call('ZADD', k_leased(j.queue), leaseUntil, j.id)
    -- The stage record reads its leaseUntil from the job (lib-jobs.lua, "Stage records").
    local stageKey = renewal.progress ~= nil and j.kind == 'stage' and JOBS.stage_key(j.runId, j.stage)
    if stageKey then redis.call('HSET', stageKey, 'progress', renewal.progress) end
    statuses[i] = { status = 'renewed', leaseUntil = leaseUntil }
  end
end
return ok(statuses)
