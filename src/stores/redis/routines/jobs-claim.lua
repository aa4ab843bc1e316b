-- jobs-claim.lua: jobs.claim, claims from any number of queues as one atomic script.
--
-- Keys (P = KEYS[1]): paused, prios:<queue>, ready:<queue>:<priority>, tenants:<queue>:<priority>,
--   tready:<queue>:<priority>:<tag>, retries:<queue>:<priority>, leased:<queue>, job:<id>,
--   stages:<runId>, stage:<runId>:<index>, run:<id>, jobs:outputs:<runId>, ledger:<key>, meta
--   (fence).
-- ARGV[2]: a random token from the client's id generator; the n-th job this call leases gets
--   the lease token ARGV[2]..'.'..n (unique: the random part is new for every call).
-- ARGV[3..]: the requests, in order, five arguments each: queue, workerId, limit, leaseMs, and
--   the retry cap (maxRetriesRunning; '' for none).
-- Result: a native reply (not ok()'s JSON: no cjson work), ONE flat array of text, false (nil)
--   for an absent field; per claimed job, grouped in request order, each group in claim order:
--   the job's JOB_READ fields after the lease, leaseOwner, leaseToken, fence, leaseUntil,
--   leaseMs, redelivered ('1' | '0'), the run's RUN_READ fields, the ledger output JSON text
--   (or nil), the count of outputs text, then that many [stage, output JSON text] of
--   jobs:outputs:<runId> (the run's succeeded stages) flattened.
-- Invariants:
--   * Claim order (JobsPort.claim): priority, then the job's rank among the candidates of its
--     tenant and priority, then availableAt, then id (see candidates()). Ready jobs come off
--     each tenant's tready zset (one tenant at a priority: off the ready zset itself), expired
--     leases (a redelivery) off leased:<queue>. A pick reads at most `limit` ready jobs per
--     tenant (past retries, under a cap) and EXPIRED_WINDOW expired leases: the cost grows with
--     the tenants of a queue, not its depth. (Past EXPIRED_WINDOW expired leases in one queue,
--     the earliest-expired are taken first; the reaper returns the rest to ready.)
--   * Retry cap: the claim takes at most cap - (leased unexpired jobs with attempt >= 2) retries
--     (attempt >= 1: retries:<queue>:<priority>, expired leases); first attempts are not held.
--   * Nothing is claimed from a paused queue; a queue named twice is picked once with the
--     summed limit (and the smallest cap), its jobs dealt to its requests in request order.
--   * Every claim takes a fence of meta's one counter (a request's jobs take theirs in one step):
--     fences only grow.

local EXPIRED_WINDOW = 256
local now = now_ms()
local nowText = int(now)
local tokenBase = ARGV[2] .. '.'
local leased = 0
local touched = {}
local fence = 0

-- Byte order of two strings (Lua 5.1's `<` on strings follows the server's locale).
local function bytes_before(a, b)
  if a == b then return false end
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- Plain order of two candidates: priority, availableAt, id.
local function plain_before(a, b)
  if a.p ~= b.p then return a.p < b.p end
  if a.at ~= b.at then return a.at < b.at end
  return bytes_before(a.id, b.id)
end

-- A candidate off a zset read (id, score) of priority `priority` (text) in state `state`.
local function candidate(id, at, priority, tag, state)
  return { id = id, p = tonumber(priority), at = tonumber(at), priority = priority, tag = tag, state = state }
end

-- Up to `limit` due ids of `tready` in order, {id, score} pairs flattened; with `skip` (a zset
-- key), ids in it are passed over (first attempts only: paged past the retries).
local function heads(tready, limit, skip)
  local due = redis.call('ZRANGEBYSCORE', tready, '-inf', nowText, 'WITHSCORES', 'LIMIT', 0, limit)
  if not skip then return due end
  local out, offset = {}, 0
  while #due > 0 do
    for i = 1, #due, 2 do
      if redis.call('ZSCORE', skip, due[i]) == false then
        out[#out + 1] = due[i]
        out[#out + 1] = due[i + 1]
        if #out >= 2 * limit then return out end
      end
    end
    offset = offset + #due / 2
    due = redis.call('ZRANGEBYSCORE', tready, '-inf', nowText, 'WITHSCORES', 'LIMIT', offset, limit)
  end
  return out
end

-- The queue's retries running: leased, lease unexpired, past their first attempt.
local function retries_running(queue)
  local n = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', k_leased(queue), '(' .. nowText, '+inf')) do
    if tonumber(redis.call('HGET', k_job(id), 'attempt') or '0') >= 2 then n = n + 1 end
  end
  return n
end

-- The claimable jobs of `queue` in claim order (JobsPort.claim: fair across tenants, priority
-- first), at most `limit`: {id, p, at, priority, tag, state}. Candidates: per priority (in
-- order, until `limit` are in from better priorities) the first `limit` due jobs of each
-- tenant (tenants:<queue>:<priority>; one tenant reads ready:<queue>:<priority> itself), plus
-- the first `limit` expired leases in plain order (of the EXPIRED_WINDOW earliest-expired).
-- With `cap` (a number), heads are first attempts only, and the retries are the first
-- `cap - running` of retries:<queue>:<p> and the expired leases in plain order.
local function candidates(queue, limit, cap)
  local budget = limit
  if cap then budget = math.max(0, math.min(limit, cap - retries_running(queue))) end
  local picked = {}
  local prios = redis.call('ZRANGE', k_prios(queue), 0, -1)
  for _, priority in ipairs(prios) do
    if #picked >= limit then break end
    local tags = redis.call('ZRANGE', k_tenants(queue, priority), 0, -1)
    local skip = cap and k_retries(queue, priority)
    if #tags == 1 and not skip then
      local due = heads(k_ready(queue, priority), limit)
      for i = 1, #due, 2 do picked[#picked + 1] = candidate(due[i], due[i + 1], priority, tags[1], 'ready') end
    else
      for _, tag in ipairs(tags) do
        local due = heads(k_tready(queue, priority, tag), limit, skip)
        for i = 1, #due, 2 do picked[#picked + 1] = candidate(due[i], due[i + 1], priority, tag, 'ready') end
      end
    end
  end
  local retries = {}
  if cap and budget > 0 then
    for _, priority in ipairs(prios) do
      if #retries >= budget then break end
      local due = redis.call('ZRANGEBYSCORE', k_retries(queue, priority), '-inf', nowText, 'WITHSCORES', 'LIMIT', 0, budget - #retries)
      for i = 1, #due, 2 do
        local tenant = redis.call('HGET', k_job(due[i]), 'tenant')
        retries[#retries + 1] = candidate(due[i], due[i + 1], priority, tenant_tag(tenant), 'ready')
      end
    end
  end
  if budget > 0 then
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', k_leased(queue), '-inf', nowText, 'LIMIT', 0, EXPIRED_WINDOW)) do
      local f = redis.call('HMGET', k_job(id), 'priority', 'availableAt', 'tenant')
      retries[#retries + 1] = candidate(id, f[2], f[1], tenant_tag(f[3]), 'leased')
    end
  end
  table.sort(retries, plain_before)
  for i = #retries, budget + 1, -1 do retries[i] = nil end
  for _, c in ipairs(retries) do picked[#picked + 1] = c end

  -- Rank within (priority, tenant) in plain order, then priority, rank, availableAt, id.
  table.sort(picked, plain_before)
  local seen = {}
  for _, c in ipairs(picked) do
    local lane = c.priority .. ':' .. c.tag
    c.rank = seen[lane] or 0
    seen[lane] = c.rank + 1
  end
  table.sort(picked, function(a, b)
    if a.p ~= b.p then return a.p < b.p end
    if a.rank ~= b.rank then return a.rank < b.rank end
    return plain_before(a, b)
  end)
  for i = #picked, limit + 1, -1 do picked[i] = nil end
  return picked
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

-- The requests, five arguments each; a queue named again is served from its first pick.
local requests, picks = {}, {}
for a = 3, #ARGV, 5 do
  local request = { queue = ARGV[a], workerId = ARGV[a + 1], limit = tonumber(ARGV[a + 2]), leaseMs = tonumber(ARGV[a + 3]),
    cap = ARGV[a + 4] ~= '' and tonumber(ARGV[a + 4]) or nil }
  requests[#requests + 1] = request
  local pick = picks[request.queue]
  if not pick then
    pick = { total = 0, next = 1 }
    picks[request.queue] = pick
  end
  if request.limit > 0 then pick.total = pick.total + request.limit end
  if request.cap and (pick.cap == nil or request.cap < pick.cap) then pick.cap = request.cap end
end
for queue, pick in pairs(picks) do
  pick.jobs = {}
  if pick.total > 0 and redis.call('SISMEMBER', k('paused'), queue) == 0 then pick.jobs = candidates(queue, pick.total, pick.cap) end
end

for _, request in ipairs(requests) do
  local pick = picks[request.queue]
  local mine = {}
  while #mine < request.limit and pick.jobs[pick.next] do
    mine[#mine + 1] = pick.jobs[pick.next]
    pick.next = pick.next + 1
  end
  touched = {}
  -- One counter step for the request's jobs: their fences in claim order.
  if #mine > 0 then fence = next_fences(#mine) end
  for _, c in ipairs(mine) do
    lease(c, request, request.leaseMs)
    if c.state == 'ready' then JOBS.unindex_ready_tag(request.queue, c.priority, c.id, c.tag) end
  end
  for priority in pairs(touched) do
    if redis.call('EXISTS', k_ready(request.queue, priority)) == 0 then redis.call('ZREM', k_prios(request.queue), priority) end
  end
end
return out
