-- retention-count.lua: RetentionPort.count. Reads only.
-- Keys: finished:<status>, run:<id>, runjobs:<runId>, job:<id>, subject:<pipeline>\0<subjectId>,
--   stages:<runId>, runledger:<runId>, attempts:<runId> (lib-keys.lua); requests:created
--   (lib-requests.lua).
-- ARGV: [2] the request period in ms or '' (kept forever), from [3] pairs (status, period ms).
-- Result: {runs, stageRecords, ledgerEntries, jobs, attempts, requests}: what retention-prune.lua
--   would delete if called until nothing is left. Walks every expired run: its cost grows with
--   what has expired (one script, so it blocks the server that long; an operator's command).

local counts = { runs = 0, stageRecords = 0, ledgerEntries = 0, jobs = 0, attempts = 0, requests = 0 }
for _, run in ipairs(RETENTION.expired(3, nil, false)) do
  counts.runs = counts.runs + 1
  counts.stageRecords = counts.stageRecords + redis.call('LLEN', k_stages(run.id))
  counts.ledgerEntries = counts.ledgerEntries + redis.call('LLEN', k_runledger(run.id))
  counts.jobs = counts.jobs + redis.call('SCARD', k_runjobs(run.id))
  counts.attempts = counts.attempts + redis.call('LLEN', k_attempts(run.id))
end
if ARGV[2] ~= '' then
  counts.requests = redis.call('ZCOUNT', k_requests_created(), '-inf', int(now_ms() - tonumber(ARGV[2])))
end
return ok(counts)
