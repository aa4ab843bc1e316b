-- jobs-commit.lua: jobs.commit, a batch of completions and failures as one atomic script.
--
-- Keys (P = KEYS[1]): job:<id>, jobrun (read), jobkey, runjobs:<runId>, run:<id>, stages:<runId>,
--   stage:<runId>:<index>, jobs:outputs:<runId>, ledger:<key>, runledger:<runId>, attempts:<runId>, queues,
--   prios:<queue>, ready:<queue>:<priority>, leased:<queue>, parked:<queue>, dead:<queue>,
--   deadjobs, pub:<subjectId> (written), lock:<key> (read: its fence).
-- ARGV[2]: run statuses that may move to parked, comma-separated (core's transition table).
-- ARGV[3]: the calling process's wake origin: the queues made ready now are published on
--   P..'wake' from here (publish_wake), so the client only wakes its own listeners.
-- ARGV[4]: JSON array of items, in order; numbers as decimal text, JSON values as JSON text:
--   complete: {type 'complete', jobId, token, output, durationMs, next?, publish?
--     [{subjectId, profile, artifactRef, subjectVersion}], lockKey?, lockFence?}
--   fail: {type 'fail', jobId, token, error, durationMs, action (retry | park | dead_letter |
--     fail), delayMs?, rollback?}
--   next / rollback: {id, stage, queue, kind, maxAttempts, priority, key (the run id as
--     JOBS.RUN_PLACEHOLDER)}.
-- Result: a native reply (no cjson): per item, in order, outcome, runStatus (nil when none),
--   publications refused (text); then the queues it made ready now (to wake).
-- Invariants:
--   * Each item is fenced by its own lease and applied as if alone, in order: the lease check
--     comes before any write, so a refused item changes nothing and does not affect the others.
--   * A completion: ledger entry (the first of a key wins), stage record succeeded with the
--     lease's attempts and start (the claim wrote neither: lib-jobs.lua, "Stage records"; a
--     rollback: rollbackStatus succeeded), the job deleted before the next one is enqueued (so its key
--     never absorbs it), the run moved on or ended, then its publications by compare-and-set.
--   * A failure appends to attempts:<runId> and applies the engine's decision as given (see
--     FailureDecision in core/ports/jobs.ts).

local parkFrom = JOBS.set_of(ARGV[2])
local now = now_ms()
local nowText = int(now)
local woken = {}

-- The run fields an enqueue needs, from job `j` (a job carries its run's pipeline, tenant and
-- trace id, which never change).
local function runOf(j)
  return { id = j.runId, pipeline = j.pipeline, tenant = j.tenant, traceId = j.traceId }
end

local function enqueue(run, spec)
  local queue = JOBS.enqueue(run, spec, now)
  if queue then woken[queue] = true end
end

-- Enqueues a compensation and marks its stage's rollback pending.
local function enqueueRollback(run, spec)
  enqueue(run, spec)
  local stageKey = JOBS.stage_key(run.id, spec.stage)
  if stageKey then redis.call('HSET', stageKey, 'rollbackStatus', 'pending') end
end

local function complete(item, j)
  local run = runOf(j)
  JOBS.ledger_put(j, item.output, now)
  local stageKey = JOBS.stage_key(j.runId, j.stage)
  if stageKey and j.kind == 'stage' then
    -- What the lease did (attempts, start: the claim did not write them) and its outcome.
    redis.call('HSET', stageKey, 'status', 'succeeded', 'output', item.output, 'finishedAt', nowText, 'durationMs', item.durationMs,
      'attempts', JOBS.stage_attempts(j), 'startedAt', j.startedAt or nowText)
    -- Only a failed attempt of this job left an error there.
    if j.lastError then redis.call('HDEL', stageKey, 'error') end
    redis.call('HSET', JOBS.k_outputs(j.runId), j.stage, item.output)
  elseif stageKey then
    redis.call('HSET', stageKey, 'rollbackStatus', 'succeeded')
  end
  -- Delete before enqueuing: the next job must not be absorbed by this one's key.
  JOBS.delete_job(j)

  local runKey = k_run(j.runId)
  local next = item.next
  local status
  if next == nil then
    status = j.kind == 'stage' and 'succeeded' or 'failed'
    redis.call('HSET', runKey, 'status', status, 'finishedAt', nowText, 'updatedAt', nowText)
    redis.call('HDEL', runKey, 'currentStage')
    JOBS.track_in_flight(j.runId, status, j.tenant)
    index_finished(j.runId, status, nowText)
  elseif next.kind == 'rollback' then
    enqueueRollback(run, next)
    redis.call('HSET', runKey, 'updatedAt', nowText)
    status = redis.call('HGET', runKey, 'status')
  else
    enqueue(run, next)
    redis.call('HSET', runKey, 'currentStage', next.stage, 'updatedAt', nowText)
    status = redis.call('HGET', runKey, 'status')
  end
  -- The job's own fence (or its lock's) orders publications: a later holder of the same version wins.
  local refused = JOBS.publish(item.publish, tonumber(j.fence), now, item.lockKey, item.lockFence)
  return 'committed', status, refused
end

-- The failed attempt as FailedAttempt JSON text (error: the item's error JSON text).
local function attemptJson(item, j)
  return '{"runId":' .. cjson.encode(j.runId) .. ',"jobId":' .. cjson.encode(j.id) .. ',"stage":' .. cjson.encode(j.stage)
    .. ',"kind":' .. cjson.encode(j.kind) .. ',"queue":' .. cjson.encode(j.queue) .. ',"attempt":' .. j.attempt
    .. ',"workerId":' .. (j.leaseOwner and cjson.encode(j.leaseOwner) or 'null') .. ',"error":' .. item.error
    .. ',"action":' .. cjson.encode(item.action) .. ',"durationMs":' .. item.durationMs .. ',"failedAt":' .. nowText .. '}'
end

local function failItem(item, j)
  local run = runOf(j)
  run.status = redis.call('HGET', k_run(j.runId), 'status')
  local runKey, jobKey = k_run(j.runId), k_job(j.id)
  local stageKey = JOBS.stage_key(j.runId, j.stage)
  local isStage = stageKey ~= nil and j.kind == 'stage'
  redis.call('RPUSH', k_attempts(j.runId), attemptJson(item, j))

  JOBS.unindex(j)
  JOBS.clear_lease(j.id)
  -- The attempt ran, so any lock wait before it is over.
  redis.call('HDEL', jobKey, 'lockWaitSince')
  redis.call('HSET', jobKey, 'lastError', item.error)
  if isStage then
    redis.call('HSET', stageKey, 'error', item.error, 'durationMs', item.durationMs, 'attempts', JOBS.stage_attempts(j))
    if j.startedAt then redis.call('HSETNX', stageKey, 'startedAt', j.startedAt) end
  end

  local action = item.action
  local runFields = { updatedAt = nowText }
  local state
  if action == 'retry' then
    local delay = math.max(0, tonumber(item.delayMs or '0'))
    state = 'ready'
    j.availableAt = int(now + delay)
    redis.call('HSET', jobKey, 'availableAt', j.availableAt)
    if isStage then redis.call('HSET', stageKey, 'status', 'failed') end
    if delay <= 0 then woken[j.queue] = true end
  elseif action == 'park' then
    state = 'parked'
    if isStage then redis.call('HSET', stageKey, 'status', 'failed') end
    -- The run parks where the transition table allows it; otherwise the job alone waits.
    if parkFrom[run.status] then
      runFields.status = 'parked'
      -- Parked waits for an operator: not finished (a dead-lettered run's finishedAt goes).
      runFields.finishedAt = false
    end
  else
    -- fail or dead_letter: the job dies, kept for inspection (and replay, for a dead letter).
    state = 'dead'
    if isStage then
      redis.call('HSET', stageKey, 'status', action == 'fail' and 'failed' or 'dead_lettered', 'finishedAt', nowText)
    elseif stageKey then
      redis.call('HSET', stageKey, 'rollbackStatus', 'dead_lettered')
    end
    if redis.call('HGET', k('jobkey'), j.idempotencyKey) == j.id then redis.call('HDEL', k('jobkey'), j.idempotencyKey) end
    runFields.error = item.error
    if action == 'dead_letter' then
      runFields.status = 'dead_lettered'
      runFields.finishedAt = nowText
    elseif item.rollback == nil then
      runFields.status = 'failed'
      runFields.currentStage = false
      runFields.finishedAt = nowText
    end
  end
  redis.call('HSET', jobKey, 'state', state)
  j.state = state
  JOBS.index(j)
  hset(runKey, runFields)
  if runFields.status then JOBS.track_in_flight(j.runId, runFields.status, j.tenant) end
  if runFields.finishedAt then index_finished(j.runId, runFields.status, nowText) end
  if state == 'dead' and item.rollback ~= nil then enqueueRollback(run, item.rollback) end
  return 'committed', runFields.status or run.status, 0
end

local out = {}
local n = 0
for _, item in ipairs(cjson.decode(ARGV[4])) do
  local j, refusal = JOBS.check_lease(item.jobId, item.token, now)
  local outcome, status, refused
  if j == nil then
    outcome, status, refused = refusal == 'cancelled' and 'cancelled' or 'lease_lost', false, 0
  elseif item.type == 'complete' then
    outcome, status, refused = complete(item, j)
  else
    outcome, status, refused = failItem(item, j)
  end
  out[n + 1] = outcome
  out[n + 2] = status or false
  out[n + 3] = int(refused)
  n = n + 3
end
local wake = {}
for queue in pairs(woken) do
  n = n + 1
  out[n] = queue
  wake[#wake + 1] = queue
end
if #wake > 0 then publish_wake(ARGV[3], wake) end
return out
