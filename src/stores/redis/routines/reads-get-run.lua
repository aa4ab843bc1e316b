-- reads-get-run: a run with its stage records in pipeline order, read together.
-- Keys: run:<id>, stages:<id>, stage:<id>:<index>, runjobs:<id>, job:<id> (a stage whose job is
--   leased reads as the lease has it, one never written as pending: lib-jobs.lua, "Stage records").
-- ARGV[2] = run id.
-- Result: { run = flat Run hash, stages = [flat StageRecord hash, ...] } or null (no such run).
-- Invariant: reads only.
local runId = ARGV[2]
local run = redis.call('HGETALL', k_run(runId))
if #run == 0 then return ok(nil) end
local stages = {}
local names = redis.call('LRANGE', k_stages(runId), 0, -1)
local leased = JOBS.leased_stages(runId)
for i, name in ipairs(names) do
  stages[i] = JOBS.stage_view(runId, i - 1, name, redis.call('HGETALL', k_stage(runId, int(i - 1))), leased[name])
end
return ok({ run = run, stages = stages })
