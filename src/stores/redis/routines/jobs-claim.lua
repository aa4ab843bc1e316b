-- jobs-claim.lua: jobs.claim, claims from any number of queues as one atomic script.
--
-- Keys (P = KEYS[1]): paused, prios:<queue>, ready:<queue>:<priority>, leased:<queue>, job:<id>,
--   stages:<runId>, stage:<runId>:<index>, run:<id>, jobs:outputs:<runId>, ledger:<key>, meta
--   (fence).
-- ARGV[2]: JSON array of requests, in order: {queue, workerId, limit, leaseMs} (numbers as text).
-- ARGV[3]: a random token from the client's id generator; the n-th job this call leases gets
--   the lease token ARGV[3]..'.'..n (unique: the random part is new for every call).
-- Result: [{job (flat hash after the lease), run (flat hash), outputs (jobs:outputs:<runId> as a
--   flat [stage, output JSON text, ...]: the run's succeeded stages), ledger (the ledger output JSON text, or
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
--   * Every claim takes a fence of meta's one counter (a request's jobs take theirs in one step):
--     fences only grow.

local EXPIRED_WINDOW = 256
local requests = cjson.decode(ARGV[2])
local now = now_ms()
local nowText = int(now)
local tokenBase = ARGV[3] .. '.'
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

-- `flat` (an HGETALL array) with `field` set to `value`.
local function patch(flat, field, value)
  for i = 1, #flat, 2 do
    if flat[i] == field then flat[i + 1] = value; return end
  end
  flat[#flat + 1] = field
  flat[#flat + 1] = value
end

-- Leases candidate `c` to `request`; returns the claimed job's answer.
local function lease(c, request, leaseMs)
  local id = c.id
  local jobKey = k_job(id)
  local j = hgetall(jobKey)
  local queue, runId = j.queue, j.runId
  -- Out of its index; an emptied ready zset leaves prios:<queue> once the request is served.
  if c.state == 'ready' then
    redis.call('ZREM', k_ready(queue, c.priority), id)
    touched[c.priority] = true
  else
    redis.call('ZREM', k_leased(queue), id)
  end
  local redelivered = c.state == 'leased'
  if redelivered then j.redeliveries = int(tonumber(j.redeliveries) + 1) end
  leased = leased + 1
  j.state = 'leased'
  j.leaseOwner = request.workerId
  j.leaseToken = tokenBase .. leased
  j.fence = int(fence)
  fence = fence + 1
  j.leaseUntil = int(now + leaseMs)
  j.leaseMs = int(leaseMs)
  j.attempt = int(tonumber(j.attempt) + 1)
  redis.call('HSET', jobKey, 'state', 'leased', 'leaseOwner', j.leaseOwner, 'leaseToken', j.leaseToken, 'fence', j.fence,
    'leaseUntil', j.leaseUntil, 'leaseMs', j.leaseMs, 'attempt', j.attempt, 'redeliveries', j.redeliveries)
  redis.call('ZADD', k_leased(queue), j.leaseUntil, id)

  -- A rollback job compensates a stage that succeeded: that record's status must stay as is.
  local stageKey = j.kind == 'stage' and JOBS.stage_key(runId, j.stage)
  if stageKey then
    local s = redis.call('HMGET', stageKey, 'status', 'attempts', 'startedAt')
    redis.call('HSET', stageKey, 'status', 'running', 'attempts', int(tonumber(s[2]) + 1), 'leaseOwner', j.leaseOwner,
      'leaseUntil', j.leaseUntil, 'startedAt', s[3] or nowText)
    -- A duplicate of a stage that succeeded: running again, so no longer among the outputs.
    if s[1] == 'succeeded' then redis.call('HDEL', JOBS.k_outputs(runId), j.stage) end
  end
  local runKey = k_run(runId)
  local run = redis.call('HGETALL', runKey)
  -- Only a run's first claim finds it queued.
  for i = 1, #run, 2 do
    if run[i] == 'status' then
      if run[i + 1] == 'queued' then
        redis.call('HSET', runKey, 'status', 'running', 'updatedAt', nowText)
        run[i + 1] = 'running'
        patch(run, 'updatedAt', nowText)
      end
      break
    end
  end
  local job = {}
  for field, value in pairs(j) do
    job[#job + 1] = field
    job[#job + 1] = value
  end
  return {
    job = job,
    run = run,
    outputs = redis.call('HGETALL', JOBS.k_outputs(runId)),
    ledger = redis.call('HGET', k_ledger(j.idempotencyKey), 'output'),
    exhausted = tonumber(j.attempt) > tonumber(j.maxAttempts),
    redelivered = redelivered,
  }
end

local claimed = {}
for _, request in ipairs(requests) do
  local limit = tonumber(request.limit)
  if limit > 0 and redis.call('SISMEMBER', k('paused'), request.queue) == 0 then
    local leaseMs = tonumber(request.leaseMs)
    touched = {}
    local picked = candidates(request.queue, limit)
    -- One counter step for the request's jobs: their fences in claim order.
    if #picked > 0 then fence = next_fences(#picked) end
    for _, c in ipairs(picked) do claimed[#claimed + 1] = lease(c, request, leaseMs) end
    for priority in pairs(touched) do
      if redis.call('EXISTS', k_ready(request.queue, priority)) == 0 then redis.call('ZREM', k_prios(request.queue), priority) end
    end
  end
end
return ok(claimed)
