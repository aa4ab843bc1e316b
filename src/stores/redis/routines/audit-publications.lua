-- audit-publications: one page of the scan of publications by (subjectId, profile), byte order.
-- Keys: pub:<subjectId> (hash profile -> JSON text).
-- ARGV: [2] cursor subjectId ('' from the start: then [3] is ignored), [3] cursor profile,
--   [4] limit.
-- Result: [[subjectId, profile, value JSON text], ...] in scan order, at most `limit`.
-- Cost: the layout keeps no ordered index of subjects, so each page SCANs the prefix's keys
--   matching pub:* (SCAN visits every key of the database), keeps the `limit` + 1 smallest
--   subjects at or after the cursor, and reads them until the page is full. An index `pubs`
--   (zset, score 0, member subjectId .. "\0" .. profile) written with the publications would
--   make a page O(limit).
-- Invariant: reads only.
local started = ARGV[2] ~= ''
local afterSubject, afterProfile = ARGV[2], ARGV[3]
local limit = tonumber(ARGV[4])
local base = k('pub:')
local pattern = string.gsub(base, '([%*%?%[%]\\])', '\\%1') .. '*'

-- Every subject has at least one profile, so the page needs at most `limit` subjects after the
-- cursor's own (whose profiles may all be behind the cursor): the smallest ones at or after it
-- (at = 0: by subject id alone).
local offer, sorted = smallest_by_at_then_id(limit + 1)
local seen = {}
local cursor = '0'
repeat
  local reply = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)
  cursor = reply[1]
  for _, key in ipairs(reply[2]) do
    local subject = string.sub(key, #base + 1)
    -- SCAN may return a key twice.
    if not seen[subject] and (not started or not bytes_lt(subject, afterSubject)) then
      seen[subject] = true
      offer({ id = subject, at = 0 })
    end
  end
until cursor == '0'

local rows = {}
for _, row in ipairs(sorted()) do
  local subject = row.id
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
