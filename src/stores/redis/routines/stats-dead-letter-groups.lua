-- stats-dead-letter-groups: the dead stage jobs of dead_lettered runs, grouped by their last
-- error's code.
-- Keys: deadjobs (every dead job id, by id), job:<id>, run:<id>.
-- ARGV: none beyond the time.
-- Result: [{ code, class, message, count, queues = [queue, ...], latest = job id }, ...]
--   (unordered; class and message are the newest dead letter's, by job id).
-- Cost: every dead job is read (five fields), as the SQL stores' GROUP BY does.
-- Invariant: reads only. lastError is decoded only to read its three text fields.
local groups, list = {}, {}
for _, id in ipairs(redis.call('ZRANGE', k('deadjobs'), 0, -1)) do
  local f = redis.call('HMGET', k_job(id), 'state', 'kind', 'runId', 'queue', 'lastError')
  if f[1] == 'dead' and f[2] == 'stage' and f[5] and redis.call('HGET', k_run(f[3]), 'status') == 'dead_lettered' then
    local decoded, lastError = pcall(cjson.decode, f[5])
    if decoded and type(lastError) == 'table' and type(lastError.code) == 'string' then
      local group = groups[lastError.code]
      if not group then
        group = { code = lastError.code, count = 0, queues = {}, seen = {} }
        groups[lastError.code] = group
        list[#list + 1] = group
      end
      group.count = group.count + 1
      if not group.seen[f[4]] then
        group.seen[f[4]] = true
        group.queues[#group.queues + 1] = f[4]
      end
      -- deadjobs is read in id order: the last job met is the newest.
      group.latest, group.class, group.message = id, lastError.class, lastError.message
    end
  end
end
for _, group in ipairs(list) do group.seen = nil end
return ok(list)
