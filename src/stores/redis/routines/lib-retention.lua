-- lib-retention.lua: what the `retention` scripts share (retention-prune.lua, retention-count.lua).
--
-- Keys (P = KEYS[1]): finished:<status> (lib-keys.lua) is the index walked;
--   P..'retention:jobrun-cursor'  string  where the incremental sweep of 'jobrun' goes on
--   (HSCAN cursor; absent = from the start).
-- Every function is a field of the one table RETENTION (one local for every script).

local RETENTION = {}

-- Whether run `runId`, found in finished:<status>, may be deleted now; the second result is true
-- when its entry is stale (the run is gone or has another status: a replay moved it on).
-- Kept: a run with a job that is not dead, and a subject's highest version (see RetentionPort).
function RETENTION.prunable(runId, status)
  local run = redis.call('HMGET', k_run(runId), 'status', 'pipeline', 'subjectId', 'subjectVersion')
  if run[1] ~= status then return false, true end
  for _, jobId in ipairs(redis.call('SMEMBERS', k_runjobs(runId))) do
    if redis.call('HGET', k_job(jobId), 'state') ~= 'dead' then return false, false end
  end
  if run[3] and run[4] then
    local subject = k('subject:' .. run[2] .. '\0' .. run[3])
    if not redis.call('ZRANGEBYSCORE', subject, '(' .. run[4], '+inf', 'LIMIT', 0, 1)[1] then return false, false end
  end
  return true, false
end

-- The expired runs of the (status, period ms) pairs in ARGV from index `from`: per status the
-- oldest prunable ones finished at or before now - period (at most `limit` per status, or all
-- with nil), then merged oldest finished first (ties: status order, then the index's order).
-- Each is {id, status, at}. With `clean`, stale entries met on the way are removed.
function RETENTION.expired(from, limit, clean)
  local now = now_ms()
  local found = {}
  for i = from, #ARGV - 1, 2 do
    local status, cutoff = ARGV[i], now - tonumber(ARGV[i + 1])
    local index = k_finished(status)
    local stale, taken, offset = {}, 0, 0
    repeat
      local page = redis.call('ZRANGEBYSCORE', index, '-inf', int(cutoff), 'WITHSCORES', 'LIMIT', offset, 200)
      for j = 1, #page, 2 do
        if limit and taken >= limit then break end
        local yes, isStale = RETENTION.prunable(page[j], status)
        if yes then
          taken = taken + 1
          found[#found + 1] = { id = page[j], status = status, at = tonumber(page[j + 1]), order = #found }
        elseif isStale then
          stale[#stale + 1] = page[j]
        end
      end
      offset = offset + 200
    until #page < 400 or (limit and taken >= limit)
    if clean and #stale > 0 then redis.call('ZREM', index, unpack(stale)) end
  end
  table.sort(found, function(a, b)
    if a.at ~= b.at then return a.at < b.at end
    return a.order < b.order
  end)
  return found
end

-- Deletes run `id` (status `status`) and everything that is its own; adds what went to `counts`.
function RETENTION.delete_run(id, status, counts)
  local run = redis.call('HMGET', k_run(id), 'pipeline', 'idempotencyKey', 'subjectId')
  local stages = redis.call('LLEN', k_stages(id))
  for i = 0, stages - 1 do redis.call('DEL', k_stage(id, i)) end
  counts.stageRecords = counts.stageRecords + stages
  local ledger = redis.call('LRANGE', k_runledger(id), 0, -1)
  for _, key in ipairs(ledger) do redis.call('DEL', k_ledger(key)) end
  counts.ledgerEntries = counts.ledgerEntries + #ledger
  for _, jobId in ipairs(redis.call('SMEMBERS', k_runjobs(id))) do
    local j = JOBS.job(jobId)
    if j then
      JOBS.delete_job(j)
      counts.jobs = counts.jobs + 1
    end
    redis.call('HDEL', k('jobrun'), jobId)
  end
  for _, attempt in ipairs(redis.call('LRANGE', k_attempts(id), 0, -1)) do
    redis.call('HDEL', k('jobrun'), cjson.decode(attempt).jobId)
    counts.attempts = counts.attempts + 1
  end
  redis.call('DEL', k_stages(id), k_runledger(id), k_runjobs(id), k_attempts(id), JOBS.k_outputs(id), k_run(id))
  if run[2] and redis.call('HGET', k('runkey'), run[1] .. '\0' .. run[2]) == id then redis.call('HDEL', k('runkey'), run[1] .. '\0' .. run[2]) end
  if run[3] then redis.call('ZREM', k('subject:' .. run[1] .. '\0' .. run[3]), id) end
  redis.call('ZREM', k('runs'), id)
  redis.call('ZREM', k_finished(status), id)
  counts.runs = counts.runs + 1
end

-- Sweeps up to `n` more entries of 'jobrun' (job id -> run id, kept after a job is deleted):
-- removes those whose run no longer exists. Succeeded jobs' ids are known nowhere else, so this
-- bounded sweep, a little each prune, is how they go.
function RETENTION.sweep_jobrun(n)
  local cursorKey = k('retention:jobrun-cursor')
  local answer = redis.call('HSCAN', k('jobrun'), redis.call('GET', cursorKey) or '0', 'COUNT', n)
  local flat = answer[2]
  for i = 1, #flat, 2 do
    if redis.call('EXISTS', k_run(flat[i + 1])) == 0 then redis.call('HDEL', k('jobrun'), flat[i]) end
  end
  if answer[1] == '0' then redis.call('DEL', cursorKey) else redis.call('SET', cursorKey, answer[1]) end
end
