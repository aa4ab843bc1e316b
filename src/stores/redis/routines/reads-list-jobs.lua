-- reads-list-jobs: jobs matching the filters, oldest first (by enqueuedAt, then id), at most `limit`.
-- Keys: runjobs:<runId>, queues, prios:<q>, ready:<q>:<priority>, leased:<q>, parked:<q>,
--   dead:<q>, job:<id>.
-- ARGV (optional ones '' when absent, '=' .. value when given): [2] queue, [3] run id, [4] state,
--   [5] limit, [6] tenant.
-- Result: [flat Job hash, ...], oldest first.
-- Cost: every job the most selective index gives (the run's jobs; else the queue's, or every
--   queue's, jobs of the state; else all jobs) is read (four fields); the `limit` oldest are kept
--   (smallest_by_at_then_id) and read whole. No index orders jobs by enqueuedAt: a zset of job ids scored by enqueuedAt
--   (ties in id order, as this listing wants) would make an unfiltered page O(limit).
-- Invariant: reads only.
local queue, runId, state = opt_arg(ARGV[2]), opt_arg(ARGV[3]), opt_arg(ARGV[4])
local limit = tonumber(ARGV[5])
local tenant = opt_arg(ARGV[6])
if limit <= 0 then return ok({}) end

local ids = {}
local function add_all(list) for _, id in ipairs(list) do ids[#ids + 1] = id end end
if runId then
  add_all(redis.call('SMEMBERS', k_runjobs(runId)))
else
  local queues = queue and { queue } or redis.call('SMEMBERS', k('queues'))
  for _, q in ipairs(queues) do
    if state == nil or state == 'ready' then
      for _, priority in ipairs(redis.call('ZRANGE', k_prios(q), 0, -1)) do add_all(redis.call('ZRANGE', k_ready(q, priority), 0, -1)) end
    end
    if state == nil or state == 'leased' then add_all(redis.call('ZRANGE', k_leased(q), 0, -1)) end
    if state == nil or state == 'parked' then add_all(redis.call('ZRANGE', k_parked(q), 0, -1)) end
    if state == nil or state == 'dead' then add_all(redis.call('ZRANGE', k_dead(q), 0, -1)) end
  end
end

local offer, sorted = smallest_by_at_then_id(limit)
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', k_job(id), 'queue', 'runId', 'state', 'enqueuedAt', 'tenant')
  if f[1] and (queue == nil or f[1] == queue) and (runId == nil or f[2] == runId) and (state == nil or f[3] == state) and (tenant == nil or f[5] == tenant) then
    offer({ id = id, at = tonumber(f[4]) })
  end
end
local out = {}
for i, row in ipairs(sorted()) do out[i] = redis.call('HGETALL', k_job(row.id)) end
return ok(out)
