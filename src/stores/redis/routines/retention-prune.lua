-- retention-prune.lua: RetentionPort.prune, one batch in one script.
-- Keys: finished:<status>, run:<id>, stages:<runId>, stage:<runId>:<index>, runledger:<runId>,
--   ledger:<key>, runjobs:<runId>, job:<id> and its state indexes, jobrun, jobkey, attempts:<runId>,
--   jobs:outputs:<runId>, runkey, subject:<pipeline>\0<subjectId>, runs (lib-keys.lua, lib-jobs.lua);
--   requests:created, request:<scope>\0<key> (lib-requests.lua); retention:jobrun-cursor
--   (lib-retention.lua).
-- ARGV: [2] limit (>= 1), [3] the request period in ms or '' (kept forever), from [4] pairs
--   (status, period ms) for the statuses with a period.
-- Result: {runs, stageRecords, ledgerEntries, jobs, attempts, requests}: what was deleted.
-- Invariants: at most `limit` runs and `limit` request records go, oldest first; a run goes with
--   everything that is its own (RETENTION.delete_run), never one that still has a job that is not
--   dead or holds its subject's highest version. Publications, cache entries, version counters
--   and locks are not touched. Then up to 10 x limit entries of jobrun are swept.

local limit = tonumber(ARGV[2])
local counts = { runs = 0, stageRecords = 0, ledgerEntries = 0, jobs = 0, attempts = 0, requests = 0 }
local expired = RETENTION.expired(4, limit, true)
for i = 1, math.min(limit, #expired) do RETENTION.delete_run(expired[i].id, expired[i].status, counts) end

if ARGV[3] ~= '' then
  local cutoff = now_ms() - tonumber(ARGV[3])
  local members = redis.call('ZRANGEBYSCORE', k_requests_created(), '-inf', int(cutoff), 'LIMIT', 0, limit)
  for _, member in ipairs(members) do redis.call('DEL', P .. 'request:' .. member) end
  if #members > 0 then redis.call('ZREM', k_requests_created(), unpack(members)) end
  counts.requests = #members
end

RETENTION.sweep_jobrun(10 * limit)
return ok(counts)
