-- operator-cancel-run.lua: operator.cancelRun as one atomic script.
--
-- Keys (P = KEYS[1]): run:<id>, runjobs:<runId>, job:<id>, jobkey, the job indexes,
--   stages:<runId>, stage:<runId>:<index>.
-- ARGV[2]: run id; ARGV[3]: the cancel error (JSON text); ARGV[4]: statuses that may move to
--   cancelled, comma-separated (core's transition table).
-- Result: the run (flat hash) after the cancel; fail not_found, or conflict INVALID_TRANSITION.
-- Invariant: the run's jobs are deleted (a holder is told 'cancelled'), stages not yet
--   succeeded become skipped.

local runId = ARGV[2]
local status = redis.call('HGET', k_run(runId), 'status')
if not status then return fail('not_found', 'NOT_FOUND', 'run ' .. runId .. ' not found', { what = 'run', id = runId }) end
if not JOBS.set_of(ARGV[4])[status] then
  return fail('conflict', 'INVALID_TRANSITION', 'run ' .. runId .. ' is ' .. status .. ' and cannot become cancelled',
    { runId = runId, from = status, to = 'cancelled' })
end
JOBS.end_run(runId, 'cancelled', ARGV[3], now_ms())
return ok(redis.call('HGETALL', k_run(runId)))
