-- jobs-submit.lua: jobs.submit, a batch of run submissions as one atomic script.
--
-- Keys (P = KEYS[1]): run:<id>, runs, runkey, subject:<pipeline>\0<subjectId>, stages:<runId>,
--   stage:<runId>:<index>, job:<id>, jobrun, runjobs:<runId>, jobkey, queues, prios:<queue>,
--   ready:<queue>:<priority>.
-- ARGV[2]: JSON array of requests, in batch order: {runId, pipeline, pipelineVersion,
--   input (JSON text), inputChecksum, stages [names], idempotencyKey?, subjectId?,
--   subjectVersion?, tenant?, traceId?, traceParent?, first: {stage, queue, kind, maxAttempts,
--   priority, key, id}}; every number as decimal text. The first job's stage is one of `stages`
--   (checked by the client before the call).
-- ARGV[3]: the terminal run statuses, comma-separated (core's transition table).
-- Result: {results: [{created, run (flat hash as this request left it)}], wake: [queues]}, or
--   fail conflict IDEMPOTENCY_KEY_REUSED {index, idempotencyKey, runId?}.
-- Invariants:
--   * All or nothing: every key is checked before the first write, so a refused batch writes
--     nothing.
--   * Each request sees the requests before it: a key used earlier in the batch returns that
--     run (created false); subject supersession sees runs created earlier in the batch.
--   * At most one run per (pipeline, idempotencyKey).

local requests = cjson.decode(ARGV[2])
local terminal = JOBS.set_of(ARGV[3])
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

-- The error a superseded run carries.
local function supersededError(byId)
  local version = redis.call('HGET', k_run(byId), 'subjectVersion')
  return cjson.encode({ class = 'permanent', code = 'SUPERSEDED', message = 'superseded by run ' .. byId .. ' (version ' .. version .. ')' })
end

-- Pass 2: apply in order.
local results, woken = {}, {}
for _, r in ipairs(requests) do
  local existing = r.idempotencyKey and redis.call('HGET', k('runkey'), runKey(r))
  if existing then
    results[#results + 1] = { created = false, run = redis.call('HGETALL', k_run(existing)) }
  else
    local id = r.runId
    local fields = {
      'id', id, 'pipeline', r.pipeline, 'pipelineVersion', r.pipelineVersion, 'status', 'queued',
      'currentStage', r.first.stage, 'input', r.input, 'inputChecksum', r.inputChecksum,
      'createdAt', nowText, 'updatedAt', nowText,
    }
    for _, name in ipairs({ 'idempotencyKey', 'subjectId', 'subjectVersion', 'tenant', 'traceId', 'traceParent' }) do
      if r[name] then fields[#fields + 1] = name; fields[#fields + 1] = r[name] end
    end
    redis.call('HSET', k_run(id), unpack(fields))
    redis.call('ZADD', k('runs'), 0, id)
    if r.idempotencyKey then redis.call('HSET', k('runkey'), runKey(r), id) end
    redis.call('RPUSH', k_stages(id), unpack(r.stages))
    for index, stage in ipairs(r.stages) do
      redis.call('HSET', k_stage(id, index - 1), 'runId', id, 'stage', stage, 'index', int(index - 1), 'status', 'pending', 'attempts', '0')
    end

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
    end
    -- A live run is as written; a superseded one is read back.
    results[#results + 1] = { created = true, run = superseded and redis.call('HGETALL', k_run(id)) or fields }
  end
end

local wake = {}
for queue in pairs(woken) do wake[#wake + 1] = queue end
return ok({ results = results, wake = wake })
