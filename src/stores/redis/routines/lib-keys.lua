-- lib-keys.lua: the Redis store's key layout and the helpers every script shares. The loader
-- (context.ts) puts every lib-*.lua file in front of each script, so this is the ONE place a key
-- name is spelled. Every script is called with ONE key, KEYS[1] = the store's prefix (for example
-- "kiln:{default}:"; the braces are a cluster hash tag, so every key of a store lives in one slot),
-- and ARGV[1] = the injected test clock in ms, or "" for the server's clock (TIME).
--
-- Conventions
-- - Records are hashes whose field names are the model's (src/core/model.ts); a null field is
--   absent; numbers are decimal text written with int(); JSON values (input, output, progress,
--   error, lastError) are JSON text written by the client and never decoded here.
-- - A script answers cjson.encode({ok = result}) or cjson.encode({err = {kind, ...}}) (see
--   fail() and context.ts). Records travel as flat HGETALL arrays (strings): the client converts
--   them (rows.ts), so no number passes through cjson's 14-digit encoder.
-- - Ids, lease tokens and worker ids come from the client (its IdGenerator), as ARGV.
--
-- Layout 5 (P = KEYS[1]; migrate.ts has the versions); the sub-port that writes a key is in brackets
--   P..'meta'                 hash   schema_version, fence (the ONE fence counter: job claims,
--                                    cache builders and locks all take next_fence())    [root]
--   P..'run:'..id             hash   Run                                                [jobs, operator]
--   P..'runs'                 zset   every run id, score 0 (lexicographic = creation order) [jobs]
--   P..'runkey'               hash   pipeline.."\0"..idempotencyKey -> run id           [jobs]
--   P..'subject:'..pipeline.."\0"..subjectId  zset  run ids, score subjectVersion        [jobs]
--   P..'stages:'..runId       list   stage names in pipeline order                      [jobs]
--   P..'stage:'..runId..':'..index  hash  StageRecord fields (index is 0-based, as in the list)
--                                    as of the stage's last lease's end, absent until a write
--                                    reaches the stage; a leased stage reads from its job
--                                    (lib-jobs.lua, "Stage records"); no leaseOwner, leaseUntil [jobs, operator]
--   P..'job:'..id             hash   Job, and for a claimed stage job startedAt, stageAttempts
--                                    (lib-jobs.lua, "Stage records")                    [jobs, operator]
--   P..'jobrun'               hash   job id -> run id of the jobs a run's end deleted (cancel,
--                                    supersede, drain)                                  [jobs, operator]
--   P..'runjobs:'..runId      set    ids of the run's existing jobs (any state)         [jobs, operator]
--   P..'jobkey'               hash   job idempotencyKey -> id of its non-dead job       [jobs, operator]
--   P..'queues'               set    every queue that ever had a job or was paused      [jobs, operator]
--   P..'paused'               set    paused queues                                      [operator]
--   P..'queues:operated'      set    every queue ever paused or resumed (queue stats list it even
--                                    when empty, as the other stores do)                [operator]
--   P..'prios:'..queue        zset   priorities that have a ready zset, score = priority [jobs]
--   P..'ready:'..queue..':'..priority  zset  ready job ids, score availableAt (ties by id)  [jobs, operator]
--   P..'tready:'..queue..':'..priority..':'..tag  zset  the ready job ids of ready:<queue>:<priority>
--                                    whose tenant has tag tenant_tag(tenant), score availableAt
--                                    (a tenant's heads for the fair claim)             [jobs, operator]
--   P..'tenants:'..queue..':'..priority  zset  tags of the non-empty tready zsets of that
--                                    priority, score 0                                 [jobs, operator]
--   P..'retries:'..queue..':'..priority  zset  the ids of ready:<queue>:<priority> past their
--                                    first attempt (attempt >= 1), score availableAt (the
--                                    retries a claim under a retry cap may take)       [jobs, operator]
--   P..'leased:'..queue       zset   leased job ids, score leaseUntil                   [jobs]
--   P..'parked:'..queue       zset   parked job ids, score 0 (by id)                    [jobs, operator]
--   P..'dead:'..queue         zset   dead job ids, score 0 (by id)                      [jobs, operator]
--   P..'deadjobs'             zset   every dead job id, score 0 (by id)                 [jobs, operator]
--   P..'ledger:'..key         string LedgerEntry as ONE write-once string (JOBS.ledger_get) [jobs]
--   P..'runledger:'..runId    list   the run's ledger keys in completion order          [jobs]
--   P..'attempts:'..runId     list   FailedAttempt as JSON text, in commit order        [jobs]
--   P..'jobs:outputs:'..runId hash   stage -> output of the run's succeeded stages (lib-jobs.lua) [jobs]
--   P..'pub:'..subjectId      hash   profile -> cjson {artifactRef, subjectVersion, fence, updatedAt}
--                                    (numbers as text)                                  [jobs, publications]
--   P..'pubs'                 zset   every subjectId with a pub: hash, score 0 (byte order) [jobs, publications]
--   P..'lock:'..key           hash   owner, token, fence, acquiredAt, expiresAt         [locks]
--   P..'wake'                 pub/sub channel: JSON [origin, [queue, ...]], a hint (wake-hub.ts) [jobs]
--   P..'locks'                zset   lock keys, score expiresAt                         [locks]
--   P..'inflight:'..tenant    set    ids of the tenant's runs queued or running; P..'inflight' for
--                                    runs without a tenant (JOBS.track_in_flight; admission counts
--                                    it at submit)                                      [jobs, operator]
--   P..'finished:'..status    zset   ids of the runs that ended with `status` (succeeded, failed,
--                                    dead_lettered, cancelled, superseded), score finishedAt: what
--                                    retention walks. Added to whenever a run ends (index_finished);
--                                    an entry whose run has since moved on (a replay) is dropped by
--                                    the next prune that meets it, not by the replay  [jobs, operator, retention]
-- A sub-port's other keys start with its own name (cache:, request:, version:, token:, tokens, blob:, blobs, artifactref:,
-- activity:, ...) and are listed in its lib-<sub-port>.lua or script headers.

local P = KEYS[1]

local function k(name) return P .. name end
local function k_run(id) return P .. 'run:' .. id end
local function k_stages(runId) return P .. 'stages:' .. runId end
local function k_stage(runId, index) return P .. 'stage:' .. runId .. ':' .. index end
local function k_job(id) return P .. 'job:' .. id end
local function k_runjobs(runId) return P .. 'runjobs:' .. runId end
local function k_prios(queue) return P .. 'prios:' .. queue end
local function k_inflight(tenant) if tenant then return P .. 'inflight:' .. tenant end return P .. 'inflight' end
local function k_ready(queue, priority) return P .. 'ready:' .. queue .. ':' .. priority end
local function k_leased(queue) return P .. 'leased:' .. queue end
-- A job's tenant as it appears in keys: '-' for none, '+'..tenant otherwise (never equal).
local function tenant_tag(tenant) if tenant == nil or tenant == false then return '-' end return '+' .. tenant end
local function k_tready(queue, priority, tag) return P .. 'tready:' .. queue .. ':' .. priority .. ':' .. tag end
local function k_tenants(queue, priority) return P .. 'tenants:' .. queue .. ':' .. priority end
local function k_retries(queue, priority) return P .. 'retries:' .. queue .. ':' .. priority end
local function k_parked(queue) return P .. 'parked:' .. queue end
local function k_dead(queue) return P .. 'dead:' .. queue end
local function k_ledger(key) return P .. 'ledger:' .. key end
local function k_runledger(runId) return P .. 'runledger:' .. runId end
local function k_attempts(runId) return P .. 'attempts:' .. runId end
local function k_pub(subjectId) return P .. 'pub:' .. subjectId end
local function k_lock(key) return P .. 'lock:' .. key end
local function k_finished(status) return P .. 'finished:' .. status end

-- An integer as exact decimal text (tostring would print 1e+15 style past 14 digits).
local function int(n) return string.format('%.0f', n) end

-- The time of this call in ms: the injected test clock (ARGV[1]) or the server's TIME.
local NOW
local function now_ms()
  if NOW then return NOW end
  if ARGV[1] ~= nil and ARGV[1] ~= '' then
    NOW = tonumber(ARGV[1])
  else
    local t = redis.call('TIME')
    NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return NOW
end

-- Records that run `runId` ended with `status` at `nowText` (decimal text), for retention.
local function index_finished(runId, status, nowText) redis.call('ZADD', k_finished(status), nowText, runId) end

-- The next fence: greater than every fence this store issued before.
local function next_fence() return redis.call('HINCRBY', P .. 'meta', 'fence', 1) end
-- The next `n` fences at once (n >= 1): returns the first; the others follow it one by one.
local function next_fences(n) return redis.call('HINCRBY', P .. 'meta', 'fence', n) - n + 1 end

-- A hash as a Lua table (empty table when the key does not exist).
local function hgetall(key)
  local flat = redis.call('HGETALL', key)
  local t = {}
  for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
  return t
end

-- Sets the fields of `t` (values already text; false removes the field) on hash `key`.
local function hset(key, t)
  local args, dels = {}, {}
  for field, value in pairs(t) do
    if value == false then dels[#dels + 1] = field else args[#args + 1] = field; args[#args + 1] = value end
  end
  if #args > 0 then redis.call('HSET', key, unpack(args)) end
  if #dels > 0 then redis.call('HDEL', key, unpack(dels)) end
end

-- Publishes a wake hint for `queues` (a list, not empty) on P..'wake' as wake-hub.ts reads it:
-- JSON [origin, [queue, ...]], `origin` being the calling process's (it skips its own).
local function publish_wake(origin, queues)
  redis.call('PUBLISH', P .. 'wake', cjson.encode({ origin, queues }))
end

local function ok(result) return cjson.encode({ ok = result == nil and cjson.null or result }) end

-- A domain error the client turns into a kiln error (context.ts): kind is one of
-- validation | not_found | conflict | unprocessable | admission (details.retryAfterMs); code,
-- message and details as the error has.
local function fail(kind, code, message, details)
  return cjson.encode({ err = { kind = kind, code = code, message = message, details = details or {} } })
end
