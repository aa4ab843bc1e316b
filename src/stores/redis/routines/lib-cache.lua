-- lib-cache.lua: the keys and the writes of the `cache` sub-port (single-flight cache entries).
-- Loaded after lib-keys.lua (see context.ts), whose locals it uses.
--
-- Keys (P = KEYS[1]; id = cache.."\0"..key, so byte order of ids is (cache, key) order)
--   P..'cache:entry:'..id   hash  CacheEntry: cache, key, status, value, error (JSON text),
--                                 builderOwner, builderToken, builderFence, builderUntil,
--                                 expiresAt, staleUntil, updatedAt (a null field is absent)
--   P..'cache:entries'      zset  every entry id, score 0 (lexicographic: the listing order)
--   P..'cache:purge'        zset  every entry id, score = when it can no longer be served and no
--                                 live builder holds it (as PostgreSQL's purge_at): building ->
--                                 builderUntil; failed -> expiresAt; ready -> the later of
--                                 (staleUntil or expiresAt) and builderUntil
-- Invariant: an entry id is in both zsets exactly while its hash exists.

local function k_cache_entry(id) return P .. 'cache:entry:' .. id end
local function k_cache_entries() return P .. 'cache:entries' end
local function k_cache_purge() return P .. 'cache:purge' end

-- Writes entry `e` (a table of text fields; false or nil = absent) as the whole hash of `id`,
-- with its place in the listing and purge indexes.
local function cache_put(id, e)
  local key = k_cache_entry(id)
  local args = {}
  for field, value in pairs(e) do
    if value then args[#args + 1] = field; args[#args + 1] = value end
  end
  redis.call('DEL', key)
  redis.call('HSET', key, unpack(args))
  local purge
  if e.status == 'building' then
    purge = tonumber(e.builderUntil)
  elseif e.status == 'failed' then
    purge = tonumber(e.expiresAt)
  else
    purge = tonumber(e.staleUntil or e.expiresAt)
    local builder = tonumber(e.builderUntil or purge)
    if builder > purge then purge = builder end
  end
  redis.call('ZADD', k_cache_entries(), 0, id)
  redis.call('ZADD', k_cache_purge(), int(purge), id)
end

-- Removes the entry `id` and its index places.
local function cache_drop(id)
  redis.call('DEL', k_cache_entry(id))
  redis.call('ZREM', k_cache_entries(), id)
  redis.call('ZREM', k_cache_purge(), id)
end
