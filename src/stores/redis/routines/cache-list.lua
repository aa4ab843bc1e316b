-- cache-list.lua: CachePort.list, for operators. Reads only.
-- Keys: the listing index and the entries (lib-cache.lua).
-- ARGV: [2] status or '' (any), [3] '1' when [4] names the only cache to list, [4] cache,
--   [5] limit (whole, >= 1).
-- Result: the matching entries' flat HGETALLs, by cache then key (byte order), at most limit.

local status, limit = ARGV[2], tonumber(ARGV[5])
-- The ids of one cache run from "<cache>\0" up to (excluding) "<cache>\1".
local min, max = '-', '+'
if ARGV[3] == '1' then min, max = '[' .. ARGV[4] .. '\0', '(' .. ARGV[4] .. '\1' end
local entries = {}
while #entries < limit do
  local page = redis.call('ZRANGE', k_cache_entries(), min, max, 'BYLEX', 'LIMIT', 0, 200)
  if #page == 0 then break end
  for _, id in ipairs(page) do
    local key = k_cache_entry(id)
    if status == '' or redis.call('HGET', key, 'status') == status then
      entries[#entries + 1] = redis.call('HGETALL', key)
      if #entries >= limit then break end
    end
  end
  min = '(' .. page[#page]
end
return ok(entries)
