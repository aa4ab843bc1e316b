-- audit-ledger-mismatches: one page of the scan of runs by id, each run with its stage records'
-- statuses and its ledger entries, read together (the client compares them).
-- Keys: runs (lexicographic), stages:<runId>, stage:<runId>:<index>, runledger:<runId>, ledger:<key>,
--   runjobs:<runId>, job:<id> (a stage whose job is leased reads running, one never written
--   pending: lib-jobs.lua, "Stage records").
-- ARGV: [2] the last run id of the previous page ('' from the start), [3] limit (runs).
-- Result: [{ id, stages = [[stage, status, rollbackStatus or ''], ...], entries = [[key, stage,
--   kind], ...] }, ...] by run id.
-- Invariant: reads only.
local min = ARGV[2] == '' and '-' or ('(' .. ARGV[2])
local runs = {}
for _, id in ipairs(redis.call('ZRANGEBYLEX', k('runs'), min, '+', 'LIMIT', 0, tonumber(ARGV[3]))) do
  local stages, entries = {}, {}
  local names = redis.call('LRANGE', k_stages(id), 0, -1)
  local leased = #names > 0 and JOBS.leased_stages(id) or {}
  for i, name in ipairs(names) do
    local s = redis.call('HMGET', k_stage(id, int(i - 1)), 'status', 'rollbackStatus')
    stages[i] = { name, leased[name] and 'running' or s[1] or 'pending', s[2] or '' }
  end
  for _, key in ipairs(redis.call('LRANGE', k_runledger(id), 0, -1)) do
    local e = JOBS.ledger_get(key)
    if e then entries[#entries + 1] = { key, e.stage, e.kind } end
  end
  runs[#runs + 1] = { id = id, stages = stages, entries = entries }
end
return ok(runs)
