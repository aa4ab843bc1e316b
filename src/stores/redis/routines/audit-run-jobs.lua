-- audit-run-jobs: one page of the scan of runs by id, each run with every job it has.
-- Keys: runs (lexicographic), run:<id>, runjobs:<runId>, job:<id>.
-- ARGV: [2] the last run id of the previous page ('' from the start), [3] limit (runs).
-- Result: [{ id, pipeline, status, currentStage (absent when null), jobs = [[id, stage, kind,
--   state], ...] }, ...] by run id (the client orders the jobs and picks the runs to report).
-- Invariant: reads only.
local min = ARGV[2] == '' and '-' or ('(' .. ARGV[2])
local runs = {}
for _, id in ipairs(redis.call('ZRANGEBYLEX', k('runs'), min, '+', 'LIMIT', 0, tonumber(ARGV[3]))) do
  local f = redis.call('HMGET', k_run(id), 'pipeline', 'status', 'currentStage')
  local jobs = {}
  for _, jobId in ipairs(redis.call('SMEMBERS', k_runjobs(id))) do
    local j = redis.call('HMGET', k_job(jobId), 'stage', 'kind', 'state')
    if j[1] then jobs[#jobs + 1] = { jobId, j[1], j[2], j[3] } end
  end
  runs[#runs + 1] = { id = id, pipeline = f[1] or '', status = f[2] or '', currentStage = f[3] or nil, jobs = jobs }
end
return ok(runs)
