-- reads-get-run: a run with its stage records in pipeline order, read together.
-- Keys: run:<id>, stages:<id>, stage:<id>:<index>.
-- ARGV[2] = run id.
-- Result: { run = flat Run hash, stages = [flat StageRecord hash, ...] } or null (no such run).
-- Invariant: reads only.
local runId = ARGV[2]
local run = redis.call('HGETALL', k_run(runId))
if #run == 0 then return ok(nil) end
local stages = {}
local count = redis.call('LLEN', k_stages(runId))
for i = 0, count - 1 do
  local stage = redis.call('HGETALL', k_stage(runId, int(i)))
  if #stage > 0 then stages[#stages + 1] = stage end
end
return ok({ run = run, stages = stages })
