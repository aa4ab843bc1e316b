-- audit-expired-leases: one page of the leased jobs whose lease ended more than the grace ago,
-- by (leaseUntil, job id), after the cursor.
-- Keys: queues, leased:<q> (score leaseUntil; ties in id order), job:<id>.
-- ARGV: [2] grace ms, [3] cursor leaseUntil ('' from the start), [4] cursor job id, [5] limit.
-- Result: { now = int text, rows = [{ id, runId, queue, stage, kind, leaseOwner (absent when
--   null), leaseUntil = int text }, ...] } in scan order, at most `limit`.
-- Cost: per queue, at most `limit` entries past the cursor (plus those tied with the cursor's
--   leaseUntil it skips); then the page's jobs.
-- Invariant: reads only.
local now = now_ms()
local max = '(' .. int(now - tonumber(ARGV[2]))
local afterAt = ARGV[3] ~= '' and tonumber(ARGV[3]) or nil
local afterId = ARGV[4]
local limit = tonumber(ARGV[5])
local min = afterAt and int(afterAt) or '-inf'

local offer, sorted = smallest_by_at_then_id(limit)
for _, queue in ipairs(redis.call('SMEMBERS', k('queues'))) do
  local taken, offset = 0, 0
  while taken < limit do
    local batch = redis.call('ZRANGEBYSCORE', k_leased(queue), min, max, 'WITHSCORES', 'LIMIT', offset, limit)
    for i = 1, #batch, 2 do
      local at = tonumber(batch[i + 1])
      if afterAt == nil or at > afterAt or bytes_lt(afterId, batch[i]) then
        offer({ id = batch[i], at = at })
        taken = taken + 1
      end
    end
    if #batch < 2 * limit then break end
    offset = offset + limit
  end
end

local rows = {}
for _, c in ipairs(sorted()) do
  local f = redis.call('HMGET', k_job(c.id), 'runId', 'queue', 'stage', 'kind', 'leaseOwner', 'state')
  if f[6] == 'leased' then
    rows[#rows + 1] = { id = c.id, runId = f[1], queue = f[2], stage = f[3], kind = f[4], leaseOwner = f[5] or nil, leaseUntil = int(c.at) }
  end
end
return ok({ now = int(now), rows = rows })
