-- lib-jobs.lua: the moves the jobs and operator scripts share, in ONE local table (JOBS) so the
-- concatenated libs stay far below Lua's 200-locals limit. Keys are lib-keys.lua's.
--
-- Shared moves
--   JOBS.enqueue      a new ready job, unless a live job with its idempotency key absorbs it
--   JOBS.delete_job   a job out of its index and gone (a cancelled one's run stays known in 'jobrun')
--   JOBS.end_run      a run ended for good: its jobs deleted, unfinished stages skipped
--   JOBS.check_lease  the lease check every lease-carrying mutation makes first
--   JOBS.ledger_put   the ledger entry of a key (the first completion wins)
--   JOBS.publish      publications by compare-and-set, fenced by the lease and the stage lock
--   JOBS.restart      a parked or dead job ready again as a fresh start (resume, replay)
--   JOBS.stage_attempts, JOBS.leased_stages, JOBS.stage_view  a stage record as read while its
--                     job is leased (see "Stage records" below)
--   JOBS.track_in_flight  inflight:<tenant> in step with a run's status (every status change of
--                     a run calls it: submit, end_run, restart, the commit's run endings)
--
-- Key of the jobs sub-port (beside lib-keys.lua's):
--   P..'jobs:outputs:'..runId  hash  stage -> output JSON text of the run's stage records that
--                                    are `succeeded` (a claim's outputs in one read)
--
-- Invariants the moves keep
--   * A job's index entry matches its state: ready -> ready:<queue>:<priority> (score
--     availableAt) with its priority in prios:<queue>; leased -> leased:<queue> (score
--     leaseUntil); parked -> parked:<queue>; dead -> dead:<queue> and deadjobs.
--   * prios:<queue> names exactly the priorities whose ready zset is not empty.
--   * A ready job is also in tready:<queue>:<priority>:<its tenant's tag>, whose tag is then in
--     tenants:<queue>:<priority> (exactly the non-empty ones), and, when attempt >= 1, in
--     retries:<queue>:<priority> (JOBS.index_ready / JOBS.unindex_ready).
--   * jobkey maps an idempotency key to its one live (non-dead) job.
--   * jobs:outputs:<runId> holds exactly the outputs of the run's succeeded stage records: set by
--     a completion, dropped when a claim or a restart moves a record out of succeeded.
--   * A job deleted by a run's end (cancel, supersede, drain) stays in 'jobrun' (job id -> run
--     id), so its holder is told 'cancelled' rather than 'lost'; a completed job is not kept
--     there (its holder, if it commits again, is told 'lost', as its run did not end by cancel).
--
-- Stage records: a submission writes none (a stage no write reached reads pending, attempts 0,
-- with its run id, name and index: JOBS.stage_view), and a claim does NOT write the stage record (it is the hot path: each write there
-- is server time on every transition). What the lease means for the record is read from the
-- leased job instead, and written to the record when the lease ends (commit, release, reap, a
-- run's end):
--   * while a stage job is leased, its stage reads as status 'running', leaseOwner and
--     leaseUntil the job's, attempts JOBS.stage_attempts(job), startedAt the record's or else the
--     job's (JOBS.leased_stages, JOBS.stage_view: reads-get-run, audit-ledger-mismatches);
--   * a stage job carries startedAt (its first claim: the stage's first claim, as a stage has one
--     stage job at a time) and stageAttempts (the stage's attempts before the job's own count
--     began: 0 for a new job, the record's at a restart), so attempts = stageAttempts + attempt
--     counts every claim, redeliveries included, and none that was released;
--   * the record's stored leaseOwner and leaseUntil stay absent.

local JOBS = {}

function JOBS.k_outputs(runId) return P .. 'jobs:outputs:' .. runId end

-- Stands for the run id in an enqueued job's key (the client knows the job, not its run).
JOBS.RUN_PLACEHOLDER = '\1run\1'

-- A set of words from 'a,b,c' (status lists the client passes from core's transition table).
function JOBS.set_of(list)
  local set = {}
  for word in string.gmatch(list or '', '[^,]+') do set[word] = true end
  return set
end

-- The fair-claim entries of ready job `id` (queue, priority and availableAt as text, tenant or
-- nil, attempt as a number): its tenant's tready zset and tag, and the retries zset past the
-- first attempt. (ready:<queue>:<priority> and prios:<queue> are the caller's.)
function JOBS.index_ready(queue, priority, availableAt, id, tenant, attempt)
  local tag = tenant_tag(tenant)
  redis.call('ZADD', k_tready(queue, priority, tag), availableAt, id)
  redis.call('ZADD', k_tenants(queue, priority), 0, tag)
  if attempt >= 1 then redis.call('ZADD', k_retries(queue, priority), availableAt, id) end
end

-- Removes ready job `id` of tenant tag `tag` from its fair-claim entries (see JOBS.index_ready).
function JOBS.unindex_ready_tag(queue, priority, id, tag)
  local tready = k_tready(queue, priority, tag)
  redis.call('ZREM', tready, id)
  if redis.call('EXISTS', tready) == 0 then redis.call('ZREM', k_tenants(queue, priority), tag) end
  redis.call('ZREM', k_retries(queue, priority), id)
end

-- Removes ready job `id` of `tenant` (nil: none) from its fair-claim entries.
function JOBS.unindex_ready(queue, priority, id, tenant)
  JOBS.unindex_ready_tag(queue, priority, id, tenant_tag(tenant))
end

-- Adds job `j` (a table with id, state, queue, priority, availableAt, leaseUntil, tenant,
-- attempt) to the index of its state.
function JOBS.index(j)
  local state, id, queue = j.state, j.id, j.queue
  if state == 'ready' then
    redis.call('ZADD', k_ready(queue, j.priority), j.availableAt, id)
    redis.call('ZADD', k_prios(queue), j.priority, j.priority)
    JOBS.index_ready(queue, j.priority, j.availableAt, id, j.tenant, tonumber(j.attempt or '0'))
  elseif state == 'leased' then
    redis.call('ZADD', k_leased(queue), j.leaseUntil, id)
  elseif state == 'parked' then
    redis.call('ZADD', k_parked(queue), 0, id)
  elseif state == 'dead' then
    redis.call('ZADD', k_dead(queue), 0, id)
    redis.call('ZADD', k('deadjobs'), 0, id)
  end
end

-- Removes job `j` (id, state, queue, priority) from the index of its state.
function JOBS.unindex(j)
  local state, id, queue = j.state, j.id, j.queue
  if state == 'ready' then
    local ready = k_ready(queue, j.priority)
    redis.call('ZREM', ready, id)
    if redis.call('EXISTS', ready) == 0 then redis.call('ZREM', k_prios(queue), j.priority) end
    JOBS.unindex_ready(queue, j.priority, id, j.tenant)
  elseif state == 'leased' then
    redis.call('ZREM', k_leased(queue), id)
  elseif state == 'parked' then
    redis.call('ZREM', k_parked(queue), id)
  elseif state == 'dead' then
    redis.call('ZREM', k_dead(queue), id)
    redis.call('ZREM', k('deadjobs'), id)
  end
end

-- The job as a table (nil when it does not exist).
function JOBS.job(id)
  local j = hgetall(k_job(id))
  if j.id == nil then return nil end
  return j
end

-- Deletes job `j` (a table as JOBS.job returns): index, live key, run's job set, record. With
-- `cancelled`, its run stays known in 'jobrun' (its holder is told 'cancelled').
function JOBS.delete_job(j, cancelled)
  JOBS.unindex(j)
  -- A leased job is live, so the job of its key (a dead one may have a live successor).
  if j.state == 'leased' then
    redis.call('HDEL', k('jobkey'), j.idempotencyKey)
  elseif j.state ~= 'dead' and redis.call('HGET', k('jobkey'), j.idempotencyKey) == j.id then
    redis.call('HDEL', k('jobkey'), j.idempotencyKey)
  end
  redis.call('SREM', k_runjobs(j.runId), j.id)
  redis.call('DEL', k_job(j.id))
  if cancelled then redis.call('HSET', k('jobrun'), j.id, j.runId) end
end

-- The stage record's attempts as stage job `j` (a table with attempt, stageAttempts) has them:
-- text.
function JOBS.stage_attempts(j)
  return int(tonumber(j.stageAttempts or '0') + tonumber(j.attempt))
end

-- The leased stage jobs of run `runId` by stage name: {leaseOwner, leaseUntil, startedAt, attempts}
-- (text), what a read shows of a stage while its job is leased.
function JOBS.leased_stages(runId)
  local leased = {}
  for _, id in ipairs(redis.call('SMEMBERS', k_runjobs(runId))) do
    local f = redis.call('HMGET', k_job(id), 'kind', 'state', 'stage', 'leaseOwner', 'leaseUntil', 'startedAt', 'stageAttempts', 'attempt')
    if f[1] == 'stage' and f[2] == 'leased' then
      leased[f[3]] = { leaseOwner = f[4], leaseUntil = f[5], startedAt = f[6], attempts = JOBS.stage_attempts({ stageAttempts = f[7] or nil, attempt = f[8] }) }
    end
  end
  return leased
end

-- Stage `name` (at `index`) of run `runId` as read, from its stored record `flat` (HGETALL; empty
-- for a stage never written: pending, no attempts) and `l`, its leased job's (JOBS.leased_stages)
-- or nil.
function JOBS.stage_view(runId, index, name, flat, l)
  local t = { runId = runId, stage = name, index = int(index), status = 'pending', attempts = '0' }
  for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
  if l then
    t.status, t.attempts, t.leaseOwner, t.leaseUntil = 'running', l.attempts, l.leaseOwner, l.leaseUntil
    if not t.startedAt then t.startedAt = l.startedAt end
  end
  local out = {}
  for field, value in pairs(t) do
    if value then out[#out + 1] = field; out[#out + 1] = value end
  end
  return out
end

-- Writes to stage record `stageKey` what stage job `j`'s lease did when it ends without a
-- completion or failure (release, reap, a run's end): its attempts and its start.
function JOBS.stage_lease_ended(stageKey, j)
  redis.call('HSET', stageKey, 'attempts', JOBS.stage_attempts(j))
  if j.startedAt then redis.call('HSETNX', stageKey, 'startedAt', j.startedAt) end
end

-- The stage record key of `stage` in run `runId`, nil when the run has no such stage: callers
-- then skip the record's write, as an UPDATE matching no row does in the SQL stores (a Lua
-- error after a write would leave the script half applied: Redis does not roll scripts back).
function JOBS.stage_key(runId, stage)
  local index = redis.call('LPOS', k_stages(runId), stage)
  if not index then return nil end
  return k_stage(runId, index)
end

-- Enqueues a ready job for run `run` (a table: id, pipeline, tenant, traceId) from `spec`
-- (stage, queue, kind, maxAttempts, priority as text, key with JOBS.RUN_PLACEHOLDER or the run
-- id, id). A live job with the same key absorbs it. Returns the queue when a job was made
-- ready now, nil when absorbed.
function JOBS.enqueue(run, spec, now)
  local key = spec.key
  local at = string.find(key, JOBS.RUN_PLACEHOLDER, 1, true)
  if at then key = string.sub(key, 1, at - 1) .. run.id .. string.sub(key, at + #JOBS.RUN_PLACEHOLDER) end
  local id, queue, nowText = spec.id, spec.queue, int(now)
  if redis.call('HSETNX', k('jobkey'), key, id) == 0 then return nil end
  local fields = {
    'id', id, 'runId', run.id, 'pipeline', run.pipeline, 'stage', spec.stage, 'queue', queue, 'kind', spec.kind,
    'state', 'ready', 'idempotencyKey', key, 'attempt', '0', 'maxAttempts', spec.maxAttempts,
    'priority', spec.priority, 'availableAt', nowText, 'enqueuedAt', nowText, 'redeliveries', '0',
  }
  if run.tenant then fields[#fields + 1] = 'tenant'; fields[#fields + 1] = run.tenant end
  if run.traceId then fields[#fields + 1] = 'traceId'; fields[#fields + 1] = run.traceId end
  redis.call('HSET', k_job(id), unpack(fields))
  redis.call('SADD', k_runjobs(run.id), id)
  redis.call('ZADD', k_ready(queue, spec.priority), nowText, id)
  JOBS.index_ready(queue, spec.priority, nowText, id, run.tenant, 0)
  -- A priority already in prios:<queue> means the queue had a ready job: it is in 'queues'.
  if redis.call('ZADD', k_prios(queue), spec.priority, spec.priority) == 1 then redis.call('SADD', k('queues'), queue) end
  return queue
end

-- Keeps inflight:<tenant> in step with run `runId` moving to `status`: a member while queued or
-- running. `tenant`: the run's (a job carries it), or nil to read it from the run.
function JOBS.track_in_flight(runId, status, tenant)
  if tenant == nil then tenant = redis.call('HGET', k_run(runId), 'tenant') end
  if status == 'queued' or status == 'running' then
    redis.call('SADD', k_inflight(tenant), runId)
  else
    redis.call('SREM', k_inflight(tenant), runId)
  end
end

-- Ends run `runId` for good with `status` and `errorText` (JSON text, or nil for none): its
-- jobs deleted (so no holder can commit), the stages that had not succeeded `skipped`.
function JOBS.end_run(runId, status, errorText, now)
  for _, jobId in ipairs(redis.call('SMEMBERS', k_runjobs(runId))) do
    local j = JOBS.job(jobId)
    if j then
      -- A leased stage job's claim counts on its record (skipped below, unless it succeeded).
      local stageKey = j.state == 'leased' and j.kind == 'stage' and JOBS.stage_key(runId, j.stage)
      if stageKey then JOBS.stage_lease_ended(stageKey, j) end
      JOBS.delete_job(j, true)
    end
  end
  local count = redis.call('LLEN', k_stages(runId))
  for i = 0, count - 1 do
    local key = k_stage(runId, i)
    if redis.call('HGET', key, 'status') ~= 'succeeded' then redis.call('HSET', key, 'status', 'skipped') end
  end
  local nowText = int(now)
  hset(k_run(runId), { status = status, error = errorText or false, currentStage = false, finishedAt = nowText, updatedAt = nowText })
  JOBS.track_in_flight(runId, status)
  index_finished(runId, status, nowText)
end

-- The lease check: the job exists, is leased, carries `token` and has not expired. Returns the
-- job table, or nil and 'cancelled' (the job is gone because its run was cancelled or
-- superseded) or 'lost'.
function JOBS.check_lease(jobId, token, now)
  local j = JOBS.job(jobId)
  if j == nil then
    local runId = redis.call('HGET', k('jobrun'), jobId)
    local status = runId and redis.call('HGET', k_run(runId), 'status')
    if status == 'cancelled' or status == 'superseded' then return nil, 'cancelled' end
    return nil, 'lost'
  end
  if j.state ~= 'leased' or j.leaseToken ~= token or tonumber(j.leaseUntil or '0') <= now then return nil, 'lost' end
  return j
end

-- Clears job `id`'s lease fields.
function JOBS.clear_lease(id)
  redis.call('HDEL', k_job(id), 'leaseOwner', 'leaseToken', 'fence', 'leaseUntil', 'leaseMs')
end

-- Records the first completion of job `j`'s idempotency key (a later one keeps the first): ONE
-- write-once string (SET NX), see JOBS.ledger_get for its form.
function JOBS.ledger_put(j, outputText, now)
  if redis.call('SET', k_ledger(j.idempotencyKey), JOBS.ledger_text(j.runId, j.kind, int(now), j.stage, outputText), 'NX') then
    redis.call('RPUSH', k_runledger(j.runId), j.idempotencyKey)
  end
end

-- A ledger entry's stored text (see JOBS.ledger_get); arguments are text.
function JOBS.ledger_text(runId, kind, completedAt, stage, outputText)
  return runId .. '\0' .. kind .. '\0' .. completedAt .. '\0' .. #stage .. '\0' .. stage .. outputText
end

-- The ledger entry of `key` as a table of text {runId, kind, completedAt, stage, output}, nil
-- when there is none. Stored as runId, kind, completedAt and the stage's length in bytes, each
-- followed by "\0" (none of them holds one), then the stage, then the output JSON text.
function JOBS.ledger_get(key)
  local text = redis.call('GET', k_ledger(key))
  if not text then return nil end
  local parts, at = {}, 1
  for i = 1, 4 do
    local nul = string.find(text, '\0', at, true)
    parts[i] = string.sub(text, at, nul - 1)
    at = nul + 1
  end
  local stageEnd = at + tonumber(parts[4]) - 1
  return { runId = parts[1], kind = parts[2], completedAt = parts[3], stage = string.sub(text, at, stageEnd), output = string.sub(text, stageEnd + 1) }
end

-- Applies publications `pubs` (each subjectId, profile, artifactRef, subjectVersion as text) of
-- a completion fenced by `leaseFence`; under a lock (`lockKey`, `lockFence` text) every one is
-- refused unless the lock on lockKey still has that fence, and accepted ones carry
-- max(lease fence, lock fence). Compare-and-set: a higher subjectVersion wins, an equal one only
-- with a higher fence. Returns how many were refused.
function JOBS.publish(pubs, leaseFence, now, lockKey, lockFence)
  if pubs == nil or #pubs == 0 then return 0 end
  local fence = leaseFence
  if lockKey then
    local current = redis.call('HGET', k_lock(lockKey), 'fence')
    if not current or tonumber(current) ~= tonumber(lockFence) then return #pubs end
    fence = math.max(leaseFence, tonumber(lockFence))
  end
  local refused = 0
  for _, p in ipairs(pubs) do
    local key = k_pub(p.subjectId)
    local stored = redis.call('HGET', key, p.profile)
    local version = tonumber(p.subjectVersion)
    local wins = true
    if stored then
      local s = cjson.decode(stored)
      local storedVersion = tonumber(s.subjectVersion)
      if version ~= storedVersion then wins = version > storedVersion else wins = fence > tonumber(s.fence) end
    end
    if wins then
      redis.call('HSET', key, p.profile, cjson.encode({
        artifactRef = p.artifactRef, subjectVersion = int(version), fence = int(fence), updatedAt = int(now),
      }))
      redis.call('ZADD', k('pubs'), 0, p.subjectId)
    else
      refused = refused + 1
    end
  end
  return refused
end

-- Makes parked or dead job `j` ready now as a fresh start (attempt 0, its stage record pending)
-- and its run running at its stage.
function JOBS.restart(j, now)
  local nowText = int(now)
  JOBS.unindex(j)
  j.state = 'ready'
  j.availableAt = nowText
  j.attempt = '0'
  redis.call('HSET', k_job(j.id), 'state', 'ready', 'attempt', '0', 'availableAt', nowText)
  JOBS.index(j)
  local stageKey = j.kind == 'stage' and JOBS.stage_key(j.runId, j.stage)
  if stageKey then
    redis.call('HSET', stageKey, 'status', 'pending')
    redis.call('HDEL', JOBS.k_outputs(j.runId), j.stage)
    -- The job's count starts again at 0: the record's attempts carry on from what it has.
    redis.call('HSET', k_job(j.id), 'stageAttempts', redis.call('HGET', stageKey, 'attempts') or '0')
  end
  redis.call('HSET', k_run(j.runId), 'status', 'running', 'currentStage', j.stage, 'updatedAt', nowText)
  JOBS.track_in_flight(j.runId, 'running', j.tenant)
end
