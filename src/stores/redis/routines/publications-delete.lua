-- publications-delete.lua: PublicationsPort.delete.
-- Keys: pub:<subjectId>, pubs (lib-keys.lua: a subject left without publications leaves it).
-- ARGV: [2] subject id, [3] '1' when only the profiles in ARGV[4..] go, else every profile.
-- Result: how many publications were removed, as decimal text.
-- Invariant: one script, so a commit publishing meanwhile lands wholly before or after it.

local key = k_pub(ARGV[2])
if ARGV[3] ~= '1' then
  local removed = redis.call('HLEN', key)
  redis.call('DEL', key)
  redis.call('ZREM', k('pubs'), ARGV[2])
  return ok(int(removed))
end
local removed = 0
for i = 4, #ARGV do removed = removed + redis.call('HDEL', key, ARGV[i]) end
if redis.call('EXISTS', key) == 0 then redis.call('ZREM', k('pubs'), ARGV[2]) end
return ok(int(removed))
