-- reads-list-dead-letters: the dead stage jobs of dead_lettered runs, newest first (by job id),
-- below the `before` cursor, at most `limit`.
-- Keys: deadjobs (every dead job id), dead:<q> (one queue's), job:<id>, run:<id>.
-- ARGV (optional ones '' when absent, '=' .. value when given): [2] error code, [3] queue,
--   [4] before (job id, exclusive), [5] limit, [6] tenant.
-- Result: [flat Job hash, ...], newest first.
-- Cost: dead jobs are walked newest first, 200 at a time, until `limit` match (the queue's own
--   index when a queue is given); a code filter reads the jobs of other codes it skips.
-- Invariant: reads only. A job's lastError is JSON text; only its `code` is read here.
local code, queue, before = opt_arg(ARGV[2]), opt_arg(ARGV[3]), opt_arg(ARGV[4])
local limit = tonumber(ARGV[5])
local tenant = opt_arg(ARGV[6])
local out = {}
if limit <= 0 then return ok(out) end
local index = queue and k_dead(queue) or k('deadjobs')

walk_lex_desc(index, before and ('(' .. before) or '+', '-', function(id)
  local f = redis.call('HMGET', k_job(id), 'state', 'kind', 'runId', 'queue', 'lastError', 'tenant')
  local keep = f[1] == 'dead' and f[2] == 'stage' and (queue == nil or f[4] == queue) and (tenant == nil or f[6] == tenant)
  if keep and code then
    local decoded, lastError = pcall(cjson.decode, f[5] or 'null')
    keep = decoded and type(lastError) == 'table' and lastError.code == code
  end
  if keep and redis.call('HGET', k_run(f[3]), 'status') == 'dead_lettered' then out[#out + 1] = redis.call('HGETALL', k_job(id)) end
  return #out >= limit
end)
return ok(out)
