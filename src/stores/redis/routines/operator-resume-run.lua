-- operator-resume-run.lua: operator.resumeRun as one atomic script.
--
-- Keys (P = KEYS[1]): run:<id>, runjobs:<runId>, job:<id>, parked:<queue>,
--   ready:<queue>:<priority>, prios:<queue>, stages:<runId>, stage:<runId>:<index>.
-- ARGV[2]: run id.
-- Result: {run (flat hash), wake: [queue]}; fail not_found, or conflict INVALID_TRANSITION
--   unless the run is parked with a parked job.
-- Invariant: the parked job becomes ready now with attempt 0 (its stage record pending), the
--   run running at its stage.

local runId = ARGV[2]
local status = redis.call('HGET', k_run(runId), 'status')
if not status then return fail('not_found', 'NOT_FOUND', 'run ' .. runId .. ' not found', { what = 'run', id = runId }) end
local parked
if status == 'parked' then
  for _, jobId in ipairs(redis.call('SMEMBERS', k_runjobs(runId))) do
    if redis.call('HGET', k_job(jobId), 'state') == 'parked' then parked = JOBS.job(jobId); break end
  end
end
if not parked then
  return fail('conflict', 'INVALID_TRANSITION', 'run ' .. runId .. ' is ' .. status .. ' and cannot be resumed',
    { runId = runId, from = status, to = 'running' })
end
JOBS.restart(parked, now_ms())
return ok({ run = redis.call('HGETALL', k_run(runId)), wake = { parked.queue } })
