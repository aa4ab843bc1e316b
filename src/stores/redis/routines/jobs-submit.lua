-- jobs-submit.lua: jobs.submit, a batch of run submissions as one atomic script.
--
-- Keys (P = KEYS[1]): run:<id>, runs, runkey, subject:<pipeline>\0<subjectId>, stages:<runId>,
--   stage:<runId>:<index> (a superseded run's), job:<id>, jobrun (a superseded run's jobs),
--   runjobs:<runId>, jobkey, queues, prios:<queue>, ready:<queue>:<priority>.
-- ARGV[2]: the terminal run statuses, comma-separated (core's transition table).
-- ARGV[3]: the calling process's wake origin: the queues made ready now are published on
--   P..'wake' from here (publish_wake), so the client only wakes its own listeners (and sends no
--   PUBLISH of its own on the connection its worker's scripts queue on).
-- ARGV[4..]: the requests, in batch order, as flat arguments (no JSON to decode; numbers as
--   decimal text, input as JSON text): runId, pipeline, pipelineVersion, input, inputChecksum,
--   the count n of optional fields, n x (name, value) of those given among idempotencyKey,
--   subjectId, subjectVersion, tenant, traceId, traceParent, the count m of stages, m stage
--   names, then the first job's id, stage, queue, kind, maxAttempts, priority, key, then the count
--   a of admission fields and a x (name, value) of those given among refuse (a code),
--   refuseAfterMs, maxInFlightRuns, maxBacklog, retryAfterMs (SubmitAdmission). The first job's
--   stage is one of the stages (checked by the client before the call).
-- Result: a native array: now (text), the count w of queues made ready now, w queues, then per
--   request '1' (created, and the run is as the request gave it: queued at its first stage,
--   created and updated now; the client builds it) or '0' (an existing run) or '2' (created
--   superseded), and for '0' and '2' the count of the run's flat hash then that flat hash;
--   or fail conflict IDEMPOTENCY_KEY_REUSED {index, idempotencyKey, runId?} (JSON text), or fail
--   admission <code> {index, tenant | queue, limit?, retryAfterMs} when a limit refuses a request.
-- Invariants:
--   * All or nothing: every key is checked before the first write, so a refused batch writes
--     nothing.
--   * Each request sees the requests before it: a key used earlier in the batch returns that
--     run (created false); subject supersession sees runs created earlier in the batch.
--   * At most one run per (pipeline, idempotencyKey).
--   * Admission: a request that creates a run is checked against its tenant's inflight set and its
--     first queue's ready jobs as they were before the call, plus the runs created by the requests
--     before it; the check precedes every write, so a refused batch writes nothing.

local terminal = JOBS.set_of(ARGV[2])

-- The requests off ARGV (see the header); limited: some request carries admission limits.
local requests = {}
local limited = false
do
  local at = 4
  while at <= #ARGV do
    local r = { runId = ARGV[at], pipeline = ARGV[at + 1], pipelineVersion = ARGV[at + 2], input = ARGV[at + 3], inputChecksum = ARGV[at + 4] }
    local optional = {}
    local count = tonumber(ARGV[at + 5])
    at = at + 6
    for i = 0, count - 1 do
      local name, value = ARGV[at + 2 * i], ARGV[at + 2 * i + 1]
      r[name] = value
      optional[#optional + 1] = name
      optional[#optional + 1] = value
    end
    r.optional = optional
    at = at + 2 * count
    local stages = {}
    for i = 1, tonumber(ARGV[at]) do stages[i] = ARGV[at + i] end
    r.stages = stages
    at = at + #stages + 1
    r.first = { id = ARGV[at], stage = ARGV[at + 1], queue = ARGV[at + 2], kind = ARGV[at + 3], maxAttempts = ARGV[at + 4], priority = ARGV[at + 5], key = ARGV[at + 6] }
    at = at + 7
    local admissionCount = tonumber(ARGV[at])
    at = at + 1
    if admissionCount > 0 then
      r.admission = {}
      for i = 0, admissionCount - 1 do r.admission[ARGV[at + 2 * i]] = ARGV[at + 2 * i + 1] end
      limited = true
    end
    at = at + 2 * admissionCount
    requests[#requests + 1] = r
  end
end
local now = now_ms()
local nowText = int(now)

local function runKey(r) return r.pipeline .. '\0' .. r.idempotencyKey end

-- Pass 1: every key keeps the checksum of the run that holds it (stored or earlier in the batch).
local batchChecksums = {}
for i, r in ipairs(requests) do
  if r.idempotencyKey then
    local rk = runKey(r)
    local storedId = redis.call('HGET', k('runkey'), rk)
    local checksum
    if storedId then checksum = redis.call('HGET', k_run(storedId), 'inputChecksum') else checksum = batchChecksums[rk] end
    if checksum == nil or checksum == false then
      batchChecksums[rk] = r.inputChecksum
    elseif checksum ~= r.inputChecksum then
      local details = { index = i - 1, idempotencyKey = r.idempotencyKey }
      if storedId then details.runId = storedId end
      return fail('conflict', 'IDEMPOTENCY_KEY_REUSED', 'idempotency key ' .. r.idempotencyKey .. ' was used with another input', details)
    end
  end
end

-- Pass 1b, with admission limits only: each request that creates a run, against the counts
-- before the call plus the runs the requests before it create.
if limited then
  local heldInBatch, byTenant, byQueue = {}, {}, {}
  local function backlog(queue)
    local count = 0
    for _, priority in ipairs(redis.call('ZRANGE', k_prios(queue), 0, -1)) do count = count + redis.call('ZCARD', k_ready(queue, priority)) end
    return count
  end
  for i, r in ipairs(requests) do
    local creates = true
    if r.idempotencyKey then
      local rk = runKey(r)
      if heldInBatch[rk] or redis.call('HEXISTS', k('runkey'), rk) == 1 then creates = false else heldInBatch[rk] = true end
    end
    if creates then
      local a, tenantKey, queue = r.admission, k_inflight(r.tenant), r.first.queue
      local tenant = r.tenant or cjson.null
      local who = r.tenant or '(none)'
      if a and a.refuse then
        return fail('admission', a.refuse, 'tenant ' .. who .. ' submits faster than its submit rate allows',
          { index = i - 1, tenant = tenant, retryAfterMs = tonumber(a.refuseAfterMs) })
      end
      if a and a.maxInFlightRuns and redis.call('SCARD', tenantKey) + (byTenant[tenantKey] or 0) >= tonumber(a.maxInFlightRuns) then
        return fail('admission', 'TENANT_IN_FLIGHT_LIMIT', 'tenant ' .. who .. ' already has ' .. a.maxInFlightRuns .. ' runs queued or running (its limit)',
          { index = i - 1, tenant = tenant, limit = tonumber(a.maxInFlightRuns), retryAfterMs = tonumber(a.retryAfterMs) })
      end
      if a and a.maxBacklog and backlog(queue) + (byQueue[queue] or 0) >= tonumber(a.maxBacklog) then
        return fail('admission', 'QUEUE_BACKLOG_FULL', 'queue ' .. queue .. ' already holds ' .. a.maxBacklog .. ' ready jobs (its backlog limit)',
          { index = i - 1, queue = queue, limit = tonumber(a.maxBacklog), retryAfterMs = tonumber(a.retryAfterMs) })
      end
      byTenant[tenantKey] = (byTenant[tenantKey] or 0) + 1
      byQueue[queue] = (byQueue[queue] or 0) + 1
    end
  end
end

-- The error a superseded run carries.
local function supersededError(byId)
  local version = redis.call('HGET', k_run(byId), 'subjectVersion')
  return cjson.encode({ class = 'permanent', code = 'SUPERSEDED', message = 'superseded by run ' .. byId .. ' (version ' .. version .. ')' })
end

-- Pass 2: apply in order.
local results, woken = {}, {}
local n = 0
local function push(value)
  n = n + 1
  results[n] = value
end
local function pushRun(flag, id)
  local flat = redis.call('HGETALL', k_run(id))
  push(flag)
  push(int(#flat))
  for i = 1, #flat do push(flat[i]) end
end
for _, r in ipairs(requests) do
  local existing = r.idempotencyKey and redis.call('HGET', k('runkey'), runKey(r))
  if existing then
    pushRun('0', existing)
  else
    local id = r.runId
    local fields = {
      'id', id, 'pipeline', r.pipeline, 'pipelineVersion', r.pipelineVersion, 'status', 'queued',
      'currentStage', r.first.stage, 'input', r.input, 'inputChecksum', r.inputChecksum,
      'createdAt', nowText, 'updatedAt', nowText,
    }
    for _, value in ipairs(r.optional) do fields[#fields + 1] = value end
    redis.call('HSET', k_run(id), unpack(fields))
    redis.call('ZADD', k('runs'), 0, id)
    if r.idempotencyKey then redis.call('HSET', k('runkey'), runKey(r), id) end
    -- No stage record yet: a stage no write reached reads pending (lib-jobs.lua, "Stage records").
    redis.call('RPUSH', k_stages(id), unpack(r.stages))

    local superseded = false
    if r.subjectId and r.subjectVersion then
      local subject = k('subject:' .. r.pipeline .. '\0' .. r.subjectId)
      local newer = redis.call('ZRANGEBYSCORE', subject, '(' .. r.subjectVersion, '+inf', 'LIMIT', 0, 1)[1]
      if newer then
        -- Born obsolete: recorded (so the submission is visible and idempotent) but never runs.
        JOBS.end_run(id, 'superseded', supersededError(newer), now)
        superseded = true
      else
        for _, older in ipairs(redis.call('ZRANGEBYSCORE', subject, '-inf', '(' .. r.subjectVersion)) do
          if not terminal[redis.call('HGET', k_run(older), 'status')] then
            JOBS.end_run(older, 'superseded', supersededError(id), now)
          end
        end
      end
      redis.call('ZADD', subject, r.subjectVersion, id)
    end
    if not superseded then
      local queue = JOBS.enqueue({ id = id, pipeline = r.pipeline, tenant = r.tenant, traceId = r.traceId }, r.first, now)
      if queue then woken[queue] = true end
      JOBS.track_in_flight(id, 'queued', r.tenant or false)
    end
    -- A live run is as the request gave it (the client builds it); a superseded one is read back.
    if superseded then pushRun('2', id) else push('1') end
  end
end

local out = { nowText, '0' }
for queue in pairs(woken) do out[#out + 1] = queue end
out[2] = int(#out - 2)
if #out > 2 then publish_wake(ARGV[3], { unpack(out, 3) }) end
for i = 1, n do out[#out + 1] = results[i] end
return out
