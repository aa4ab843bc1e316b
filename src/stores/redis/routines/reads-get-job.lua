-- reads-get-job: one job as it stands.
-- Keys: job:<id>.
-- ARGV[2] = job id.
-- Result: the flat Job hash, or null (deleted once done, or never existed).
-- Invariant: reads only.
local job = redis.call('HGETALL', k_job(ARGV[2]))
if #job == 0 then return ok(nil) end
return ok(job)
