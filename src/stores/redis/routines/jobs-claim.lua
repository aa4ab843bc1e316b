-- jobs-claim.lua: jobs.claim, claims from any number of queues as one atomic script.
--
-- Keys (P = KEYS[1]): paused, prios:<queue>, ready:<queue>:<priority>, leased:<queue>, job:<id>,
--   stages:<runId>, stage:<runId>:<index>, run:<id>, ledger:<key>, meta (fence).
-- ARGV[2]: JSON array of requests, in order: {queue, workerId, limit, leaseMs} (numbers as text).
-- ARGV[3..]: lease tokens, at least as many as the limits add up to (taken in order).
-- Result: [{job (flat hash after the lease), run (flat hash), outputs (flat [stage, output
--   JSON text, ...] of the run's succeeded stages), ledger (the ledger output JSON text, or
--   false), exhausted, redelivered}], grouped in request order, each group in claim order.
-- Invariants:
--   * Claim order: priority (lower first), then availableAt, then id: ready jobs come off the
--     ready zsets of each priority in order (score availableAt, ties by id), expired leases
--     (a redelivery) off leased:<queue> and are merged in by the same order. A pick reads at
--     most `limit` ready jobs and EXPIRED_WINDOW expired leases: the cost does not grow with
--     queue depth. (Past EXPIRED_WINDOW expired leases in one queue, the earliest-expired are
--     taken first; the reaper returns the rest to ready.)
--   * Nothing is claimed from a paused queue; a queue named twice is served twice, the second
--     request seeing the first one's jobs as leased.
--   * Every claim takes the next fence of meta's one counter: fences only grow.

local EXPIRED_WINDOW = 256
local requests = cjson.decode(ARGV[2])
local now = now_ms()
local nowText = int(now)
local nextToken = 3

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

-- Outputs of the run's succeeded stages, flat [stage, output, ...].
local function outputsOf(runId)
  local outputs = {}
  local count = redis.call('LLEN', k_stages(runId))
  for i = 0, count - 1 do
    local f = redis.call('HMGET', k_stage(runId, i), 'status', 'stage', 'output')
    if f[1] == 'succeeded' then
      outputs[#outputs + 1] = f[2]
      outputs[#outputs + 1] = f[3] or 'null'
    end
  end
  return outputs
end

-- Leases candidate `c` to `request`; returns the claimed job's answer.
local function lease(c, request, leaseMs)
  local id = c.id
  local jobKey = k_job(id)
  local f = redis.call('HMGET', jobKey, 'queue', 'runId', 'stage', 'kind', 'idempotencyKey', 'attempt', 'maxAttempts')
  local queue, runId, stage, kind, key = f[1], f[2], f[3], f[4], f[5]
  local attempt = tonumber(f[6]) + 1
  JOBS.unindex({ id = id, state = c.state, queue = queue, priority = c.priority })
  local redelivered = c.state == 'leased'
  if redelivered then redis.call('HINCRBY', jobKey, 'redeliveries', 1) end
  local token = ARGV[nextToken]
  nextToken = nextToken + 1
  local leaseUntil = int(now + leaseMs)
  redis.call('HSET', jobKey, 'state', 'leased', 'leaseOwner', request.workerId, 'leaseToken', token,
    'fence', int(next_fence()), 'leaseUntil', leaseUntil, 'leaseMs', int(leaseMs), 'attempt', int(attempt))
  JOBS.index({ id = id, state = 'leased', queue = queue, leaseUntil = leaseUntil })

  -- A rollback job compensates a stage that succeeded: that record's status must stay as is.
  if kind == 'stage' then
    local stageKey = JOBS.stage_key(runId, stage)
    redis.call('HSET', stageKey, 'status', 'running', 'leaseOwner', request.workerId, 'leaseUntil', leaseUntil)
    redis.call('HINCRBY', stageKey, 'attempts', 1)
    redis.call('HSETNX', stageKey, 'startedAt', nowText)
  end
  local runKey = k_run(runId)
  if redis.call('HGET', runKey, 'status') == 'queued' then
    redis.call('HSET', runKey, 'status', 'running', 'updatedAt', nowText)
  end
  return {
    job = redis.call('HGETALL', jobKey),
    run = redis.call('HGETALL', runKey),
    outputs = outputsOf(runId),
    ledger = redis.call('HGET', k_ledger(key), 'output'),
    exhausted = attempt > tonumber(f[7]),
    redelivered = redelivered,
  }
end

local claimed = {}
for _, request in ipairs(requests) do
  local limit = tonumber(request.limit)
  if limit > 0 and redis.call('SISMEMBER', k('paused'), request.queue) == 0 then
    local leaseMs = tonumber(request.leaseMs)
    for _, c in ipairs(candidates(request.queue, limit)) do claimed[#claimed + 1] = lease(c, request, leaseMs) end
  end
end
return ok(claimed)
