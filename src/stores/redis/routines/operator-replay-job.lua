-- operator-replay-job.lua: operator.replayJob as one atomic script.
--
-- Keys (P = KEYS[1]): job:<id>, run:<id>, jobkey, dead:<queue>, deadjobs,
--   ready:<queue>:<priority>, prios:<queue>, stages:<runId>, stage:<runId>:<index>.
-- ARGV[2]: job id; ARGV[3]: statuses that may move to running, comma-separated (core's
--   transition table).
-- Result: {job (flat hash), wake: [queue]}; fail not_found, conflict INVALID_TRANSITION (the job
--   is not dead, its run failed permanently or may not run again) or RUN_COMPENSATED (a
--   compensation was enqueued for the run).
-- Invariant: the dead job becomes ready now with attempt 0 and the live job of its key, its
--   stage record pending, its run running with no error and no finishedAt.

local jobId = ARGV[2]
local job = JOBS.job(jobId)
if not job then return fail('not_found', 'NOT_FOUND', 'job ' .. jobId .. ' not found', { what = 'job', id = jobId }) end
if job.state ~= 'dead' then
  return fail('conflict', 'INVALID_TRANSITION', 'job ' .. jobId .. ' is ' .. job.state .. '; only dead jobs can be replayed',
    { jobId = jobId, state = job.state })
end
local runId = job.runId
for i = 0, redis.call('LLEN', k_stages(runId)) - 1 do
  if redis.call('HEXISTS', k_stage(runId, i), 'rollbackStatus') == 1 then
    return fail('conflict', 'RUN_COMPENSATED', 'run ' .. runId .. ' was rolled back; submit a new run instead', { runId = runId, jobId = jobId })
  end
end
local status = redis.call('HGET', k_run(runId), 'status')
if status == 'failed' then
  return fail('conflict', 'INVALID_TRANSITION',
    'run ' .. runId .. ' failed permanently; job ' .. jobId .. ' cannot be replayed, submit a new run instead',
    { runId = runId, jobId = jobId, from = status, to = 'running' })
end
if not JOBS.set_of(ARGV[3])[status] then
  return fail('conflict', 'INVALID_TRANSITION', 'run ' .. runId .. ' is ' .. status .. ' and cannot become running',
    { runId = runId, from = status, to = 'running' })
end
JOBS.restart(job, now_ms())
redis.call('HSET', k('jobkey'), job.idempotencyKey, jobId)
redis.call('HDEL', k_run(runId), 'error', 'finishedAt')
return ok({ job = redis.call('HGETALL', k_job(jobId)), wake = { job.queue } })
