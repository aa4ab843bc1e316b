-- operator-drain-queue.lua: operator.drainQueue as one atomic script.
--
-- Keys (P = KEYS[1]): prios:<queue>, ready:<queue>:<priority>, job:<id>, jobkey, runjobs:<runId>,
--   run:<id>, stages:<runId>, stage:<runId>:<index>, and the indexes of the runs' other jobs.
-- ARGV[2]: queue; ARGV[3]: the cancel error (JSON text); ARGV[4]: terminal run statuses,
--   comma-separated (core's transition table).
-- Result: how many ready jobs were removed (scheduled ones included; leased ones finish).
-- Invariant: each removed job's run, unless it already ended, is cancelled (its other jobs
--   deleted, unfinished stages skipped), once.

local queue = ARGV[2]
local terminal = JOBS.set_of(ARGV[4])
local now = now_ms()
local ready = {}
for _, priority in ipairs(redis.call('ZRANGE', k_prios(queue), 0, -1)) do
  for _, id in ipairs(redis.call('ZRANGE', k_ready(queue, priority), 0, -1)) do ready[#ready + 1] = id end
end
for _, id in ipairs(ready) do
  local job = JOBS.job(id)
  -- A run with two ready jobs here is cancelled once (its end deleted the other already).
  if job then
    JOBS.delete_job(job, true)
    if not terminal[redis.call('HGET', k_run(job.runId), 'status')] then JOBS.end_run(job.runId, 'cancelled', ARGV[3], now) end
  end
end
return ok(#ready)
