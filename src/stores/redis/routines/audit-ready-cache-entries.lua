-- audit-ready-cache-entries: one page of the scan of `ready` cache entries by (cache, key), with
-- their values (the client finds the artifact references in them).
-- Keys: cache:entries (every entry id = cache .. "\0" .. key, lexicographic), cache:entry:<id>
--   (lib-cache.lua, the cache sub-port's layout).
-- ARGV: [2] cursor cache ('' from the start: then [3] is ignored), [3] cursor key, [4] limit
--   (ready entries).
-- Result: [[cache, key, value JSON text], ...] in scan order, at most `limit`.
-- Cost: the entries after the cursor, 200 ids at a time, until `limit` ready ones are read
--   (entries in other states are skipped, not counted).
-- Invariant: reads only.
local limit = tonumber(ARGV[4])
local min = ARGV[2] == '' and '-' or ('(' .. ARGV[2] .. '\0' .. ARGV[3])
local rows = {}
while #rows < limit do
  local ids = redis.call('ZRANGEBYLEX', k_cache_entries(), min, '+', 'LIMIT', 0, 200)
  for _, id in ipairs(ids) do
    local f = redis.call('HMGET', k_cache_entry(id), 'status', 'cache', 'key', 'value')
    if f[1] == 'ready' then
      rows[#rows + 1] = { f[2], f[3], f[4] or 'null' }
      if #rows >= limit then break end
    end
  end
  if #ids < 200 then break end
  min = '(' .. ids[#ids]
end
return ok(rows)
