-- jobs-claim.lua: jobs.claim, claims from any number of queues as one atomic script.
--
-- Keys (P = KEYS[1]): paused, prios:<queue>, ready:<queue>:<priority>, leased:<queue>, job:<id>,
--   stages:<runId>, stage:<runId>:<index>, run:<id>, jobs:outputs:<runId>, ledger:<key>, meta
--   (fence).
-- ARGV[2]: a random token from the client's id generator; the n-th job this call leases gets
--   the lease token ARGV[2]..'.'..n (unique: the random part is new for every call).
-- ARGV[3..]: the requests, in order, four arguments each: queue, workerId, limit, leaseMs.
-- Result: a native reply (not ok()'s JSON: no cjson work), ONE flat array of text, false (nil)
--   for an absent field; per claimed job, grouped in request order, each group in claim order:
--   the job's JOB_READ fields after the lease, leaseOwner, leaseToken, fence, leaseUntil,
--   leaseMs, redelivered ('1' | '0'), the run's RUN_READ fields, the ledger output JSON text
--   (or nil), the count of outputs text, then that many [stage, output JSON text] of
--   jobs:outputs:<runId> (the run's succeeded stages) flattened.
-- Invariants:
--   * Claim order: priority (lower first), then availableAt, then id: ready jobs come off the
--     ready zsets of each priority in order (score availableAt, ties by id), expired leases
--     (a redelivery) off leased:<queue> and are merged in by the same order. A pick reads at
--     most `limit` ready jobs and EXPIRED_WINDOW expired leases: the cost does not grow with
--     queue depth. (Past EXPIRED_WINDOW expired leases in one queue, the earliest-expired are
--     taken first; the reaper returns the rest to ready.)
--   * Nothing is claimed from a paused queue; a queue named twice is served twice, the second
--     request seeing the first one's jobs as leased.
--   * Every claim takes a fence of meta's one counter (a request's jobs take theirs in one step):
--     fences only grow.

local EXPIRED_WINDOW = 256
local now = now_ms()
local nowText = int(now)
local tokenBase = ARGV[2] .. '.'
local leased = 0
local touched = {}
local fence = 0

-- The due jobs of `queue` in claim order, at most `limit`: {id, priority, availableAt, state}.
local function candidates(queue, limit)
  local picked = {}
  for _, priority in ipairs(redis.call('ZRANGE', k_prios(queue), 0, -1)) do
    local left = limit - #picked
    if left <= 0 then break end
    local due = redis.call('ZRANGEBYSCORE', k_ready(queue, priority), '-inf', nowText, 'WITHSCORES', 'LIMIT', 0, left)
    for i = 1, #due, 2 do
      picked[#picked + 1] = { id = due[i], p = tonumber(priority), at = tonumber(due[i + 1]), priority = priority, state = 'ready' }
    end
  end
  local expired = redis.call('ZRANGEBYSCORE', k_leased(queue), '-inf', nowText, 'LIMIT', 0, EXPIRED_WINDOW)
  if #expired == 0 then return picked end
  for _, id in ipairs(expired) do
    local f = redis.call('HMGET', k_job(id), 'priority', 'availableAt')
    picked[#picked + 1] = { id = id, p = tonumber(f[1]), at = tonumber(f[2]), priority = f[1], state = 'leased' }
  end
  table.sort(picked, function(a, b)
    if a.p ~= b.p then return a.p < b.p end
    if a.at ~= b.at then return a.at < b.at end
    return a.id < b.id
  end)
  local top = {}
  for i = 1, math.min(limit, #picked) do top[i] = picked[i] end
  return top
end

-- The fields a claim reads, in answer order (jobs/claim.ts reads them by position: keep both in step).
local JOB_READ = { 'id', 'runId', 'pipeline', 'stage', 'queue', 'kind', 'idempotencyKey', 'attempt', 'maxAttempts',
  'priority', 'availableAt', 'enqueuedAt', 'tenant', 'traceId', 'redeliveries', 'lastError', 'lockWaitSince' }
local RUN_READ = { 'id', 'pipeline', 'pipelineVersion', 'status', 'currentStage', 'input', 'inputChecksum', 'idempotencyKey',
  'subjectId', 'subjectVersion', 'tenant', 'traceId', 'traceParent', 'error', 'createdAt', 'updatedAt', 'finishedAt' }
local JOB_N, RUN_N = #JOB_READ, #RUN_READ
-- Read besides, not answered: the job's first claim (lib-jobs.lua, "Stage records").
local JOB_FIELDS = { unpack(JOB_READ) }
JOB_FIELDS[JOB_N + 1] = 'startedAt'

-- The answer: one flat array of text (false = absent), a native reply (no cjson).
local out = {}
local n = 0
local function push(value)
  n = n + 1
  out[n] = value
end

-- A stage job claimed while its stage is succeeded (a duplicate): the stage runs again, so it
-- leaves the run's outputs (`outputs`, the flat jobs:outputs hash, loses it too) and its record
-- reads 'running'; the job carries on the record's attempts and start. Returns the outputs.
local function rerun(jobKey, runId, stage, attempt, outputs)
  redis.call('HDEL', JOBS.k_outputs(runId), stage)
  local kept = {}
  for i = 1, #outputs, 2 do
    if outputs[i] ~= stage then kept[#kept + 1] = outputs[i]; kept[#kept + 1] = outputs[i + 1] end
  end
  local stageKey = JOBS.stage_key(runId, stage)
  if stageKey then
    local s = redis.call('HMGET', stageKey, 'attempts', 'startedAt')
    redis.call('HSET', stageKey, 'status', 'running')
    -- Reads show stageAttempts + attempt: the record's count plus this claim.
    redis.call('HSET', jobKey, 'stageAttempts', int(tonumber(s[1] or '0') + 1 - tonumber(attempt)), 'startedAt', s[2] or nowText)
  end
  return kept
end

-- Leases candidate `c` to `request`; appends the claimed job's answer to `out`. The stage record
-- is not written (lib-jobs.lua, "Stage records").
local function lease(c, request, leaseMs)
  local id = c.id
  local jobKey = k_job(id)
  local j = redis.call('HMGET', jobKey, unpack(JOB_FIELDS))
  local runId, stage, queue, kind = j[2], j[4], j[5], j[6]
  -- Out of its index; an emptied ready zset leaves prios:<queue> once the request is served.
  if c.state == 'ready' then
    redis.call('ZREM', k_ready(queue, c.priority), id)
    touched[c.priority] = true
  else
    redis.call('ZREM', k_leased(queue), id)
  end
  local redelivered = c.state == 'leased'
  if redelivered then j[15] = int(tonumber(j[15]) + 1) end
  leased = leased + 1
  local owner, token, fenceText = request.workerId, tokenBase .. leased, int(fence)
  fence = fence + 1
  local leaseUntil = int(now + leaseMs)
  local attempt = int(tonumber(j[8]) + 1)
  j[8] = attempt
  if j[JOB_N + 1] then
    redis.call('HSET', jobKey, 'state', 'leased', 'leaseOwner', owner, 'leaseToken', token, 'fence', fenceText,
      'leaseUntil', leaseUntil, 'leaseMs', int(leaseMs), 'attempt', attempt, 'redeliveries', j[15])
  else
    redis.call('HSET', jobKey, 'state', 'leased', 'leaseOwner', owner, 'leaseToken', token, 'fence', fenceText,
      'leaseUntil', leaseUntil, 'leaseMs', int(leaseMs), 'attempt', attempt, 'redeliveries', j[15], 'startedAt', nowText)
  end
  redis.call('ZADD', k_leased(queue), leaseUntil, id)

  local runKey = k_run(runId)
  local run = redis.call('HMGET', runKey, unpack(RUN_READ))
  -- Only a run's first claim finds it queued.
  if run[4] == 'queued' then
    redis.call('HSET', runKey, 'status', 'running', 'updatedAt', nowText)
    run[4] = 'running'
    run[16] = nowText
  end
  local outputs = redis.call('HGETALL', JOBS.k_outputs(runId))
  if kind == 'stage' then
    for i = 1, #outputs, 2 do
      if outputs[i] == stage then
        outputs = rerun(jobKey, runId, stage, attempt, outputs)
        break
      end
    end
  end
  for i = 1, JOB_N do push(j[i]) end
  push(owner); push(token); push(fenceText); push(leaseUntil); push(int(leaseMs))
  push(redelivered and '1' or '0')
  for i = 1, RUN_N do push(run[i]) end
  local ledger = JOBS.ledger_get(j[7])
  push(ledger and ledger.output or false)
  push(int(#outputs))
  for i = 1, #outputs do push(outputs[i]) end
end

for a = 3, #ARGV, 4 do
  local request = { queue = ARGV[a], workerId = ARGV[a + 1], limit = ARGV[a + 2], leaseMs = ARGV[a + 3] }
  local limit = tonumber(request.limit)
  if limit > 0 and redis.call('SISMEMBER', k('paused'), request.queue) == 0 then
    local leaseMs = tonumber(request.leaseMs)
    touched = {}
    local picked = candidates(request.queue, limit)
    -- One counter step for the request's jobs: their fences in claim order.
    if #picked > 0 then fence = next_fences(#picked) end
    for _, c in ipairs(picked) do lease(c, request, leaseMs) end
    for priority in pairs(touched) do
      if redis.call('EXISTS', k_ready(request.queue, priority)) == 0 then redis.call('ZREM', k_prios(request.queue), priority) end
    end
  end
end
return out
