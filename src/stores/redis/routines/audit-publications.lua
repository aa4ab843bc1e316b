-- audit-publications: one page of the scan of publications by (subjectId, profile), byte order.
-- Keys: pubs, pub:<subjectId> (hash profile -> JSON text).
-- ARGV: [2] cursor subjectId ('' from the start: then [3] is ignored), [3] cursor profile,
--   [4] limit.
-- Result: [[subjectId, profile, value JSON text], ...] in scan order, at most `limit`.
-- Cost: O(log n + limit): the subjects come off the 'pubs' index (score 0, so byte order).
-- Invariant: reads only.
local started = ARGV[2] ~= ''
local afterSubject, afterProfile = ARGV[2], ARGV[3]
local limit = tonumber(ARGV[4])

-- Every subject has at least one profile, so the page needs at most `limit` subjects after the
-- cursor's own (whose profiles may all be behind the cursor).
local subjects = redis.call('ZRANGEBYLEX', k('pubs'), started and '[' .. afterSubject or '-', '+', 'LIMIT', 0, limit + 1)

local rows = {}
for _, subject in ipairs(subjects) do
  local flat = redis.call('HGETALL', k_pub(subject))
  local profiles, values = {}, {}
  for i = 1, #flat, 2 do
    if not (started and subject == afterSubject and not bytes_lt(afterProfile, flat[i])) then
      profiles[#profiles + 1] = flat[i]
      values[flat[i]] = flat[i + 1]
    end
  end
  table.sort(profiles, bytes_lt)
  for _, profile in ipairs(profiles) do
    if #rows >= limit then break end
    rows[#rows + 1] = { subject, profile, values[profile] }
  end
  if #rows >= limit then break end
end
return ok(rows)
