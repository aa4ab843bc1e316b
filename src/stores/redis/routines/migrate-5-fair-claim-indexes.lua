-- migrate-5-fair-claim-indexes.lua: layout 4 -> 5, in one atomic step (migrate.ts runs it before
-- the version is set). Layout 5 claims fairly across tenants from the fair-claim entries of the
-- ready jobs (tready:<queue>:<priority>:<tag>, tenants:<queue>:<priority>, retries:<queue>:<priority>:
-- lib-keys.lua), which every script that readies a job keeps (JOBS.index_ready); this step builds
-- them for the jobs a layout-4 kiln left ready.
-- Keys (P = KEYS[1]): meta, queues, prios:<queue>, ready:<queue>:<priority>, job:<id>, and the
--   fair-claim entries above.
-- ARGV[2]: now (ms, text).
-- Result: the version found before (text); the step applies only to a store at version 4.
-- Invariant: afterwards every ready job is in its tenant's tready zset, its tag in tenants, and,
--   past its first attempt, in retries.
local meta = k('meta')
local current = redis.call('HGET', meta, 'schema_version')
if current ~= '4' then return current or '0' end
for _, queue in ipairs(redis.call('SMEMBERS', k('queues'))) do
  for _, priority in ipairs(redis.call('ZRANGE', k_prios(queue), 0, -1)) do
    local ready = redis.call('ZRANGE', k_ready(queue, priority), 0, -1, 'WITHSCORES')
    for i = 1, #ready, 2 do
      local f = redis.call('HMGET', k_job(ready[i]), 'tenant', 'attempt')
      JOBS.index_ready(queue, priority, ready[i + 1], ready[i], f[1] or nil, tonumber(f[2] or '0'))
    end
  end
end
redis.call('HSET', meta, 'schema_version', '5', 'migrated_at', ARGV[2])
return '4'
