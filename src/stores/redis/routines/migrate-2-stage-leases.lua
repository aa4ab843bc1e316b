-- migrate-2-stage-leases.lua: layout 1 -> 2, in one atomic step (migrate.ts runs it before the
-- version is set). Layout 2 no longer writes the stage record at claim (lib-jobs.lua, "Stage
-- records"): a stage job carries startedAt and stageAttempts, and the record's leaseOwner and
-- leaseUntil stay absent; a ledger entry is one string (JOBS.ledger_get), no longer a hash.
-- Keys (P = KEYS[1]): meta, runs, runjobs:<runId>, job:<id>, stages:<runId>, stage:<runId>:<index>,
--   runledger:<runId>, ledger:<key>.
-- ARGV[2]: now (ms, text).
-- Result: the version found before (text); the step applies only to a store at version 1.
-- Invariant: every stage job's record reads as it did: its stageAttempts is the record's attempts
--   less the job's own (layout 1 counted each claim on the record), its startedAt the record's.
local meta = k('meta')
local current = redis.call('HGET', meta, 'schema_version')
if current ~= '1' then return current or '0' end
for _, runId in ipairs(redis.call('ZRANGE', k('runs'), 0, -1)) do
  for _, id in ipairs(redis.call('SMEMBERS', k_runjobs(runId))) do
    local j = redis.call('HMGET', k_job(id), 'kind', 'stage', 'attempt', 'state')
    local stageKey = j[1] == 'stage' and JOBS.stage_key(runId, j[2])
    if stageKey then
      local s = redis.call('HMGET', stageKey, 'attempts', 'startedAt')
      redis.call('HSET', k_job(id), 'stageAttempts', int(tonumber(s[1] or '0') - tonumber(j[3])))
      if s[2] then redis.call('HSET', k_job(id), 'startedAt', s[2]) end
      if j[4] == 'leased' then redis.call('HDEL', stageKey, 'leaseOwner', 'leaseUntil') end
    end
  end
  for _, key in ipairs(redis.call('LRANGE', k_runledger(runId), 0, -1)) do
    local e = redis.call('HMGET', k_ledger(key), 'runId', 'stage', 'kind', 'output', 'completedAt')
    if e[1] then
      redis.call('DEL', k_ledger(key))
      redis.call('SET', k_ledger(key), JOBS.ledger_text(e[1], e[3], e[5], e[2], e[4] or 'null'))
    end
  end
end
redis.call('HSET', meta, 'schema_version', '2', 'migrated_at', ARGV[2])
return '1'
