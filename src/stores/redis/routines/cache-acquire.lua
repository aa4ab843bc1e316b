-- cache-acquire.lua: CachePort.acquire, the single-flight entry point.
-- Keys: the entry of (cache, key) and its index places (lib-cache.lua); meta's fence counter.
-- ARGV: [2] cache, [3] key, [4] owner, [5] token, [6] lease ms (whole, >= 0).
-- Result: {state, revalidate, entry}: state hit | stale | negative | building | build; revalidate
--   true when this caller took the builder lease of a stale entry; entry the flat HGETALL of the
--   entry after the call.
-- Invariant: one builder per key at a time. The decision (as PostgreSQL's cache_decision) and
--   the lease taken on it are one script, so of any number of callers exactly one gets `build`
--   (or `stale` + revalidate); fresh means now < expiresAt, a builder lease is live while
--   now < builderUntil. Builder fences come from next_fence(), shared with job and lock fences.

local cache, key, owner, token, leaseMs = ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local id = cache .. '\0' .. key
local entryKey = k_cache_entry(id)
local now = now_ms()
local e = hgetall(entryKey)

-- What this caller finds: hit, negative, stale, building, revalidate or build.
local function decide()
  if e.status == nil then return 'build' end
  local expiresAt = e.expiresAt and tonumber(e.expiresAt)
  local staleUntil = e.staleUntil and tonumber(e.staleUntil)
  local builderUntil = e.builderUntil and tonumber(e.builderUntil)
  local liveBuilder = builderUntil ~= nil and now < builderUntil
  if e.status == 'ready' and now < expiresAt then return 'hit' end
  if e.status == 'ready' and staleUntil ~= nil and now < staleUntil then
    if liveBuilder then return 'stale' end
    return 'revalidate'
  end
  if e.status == 'failed' and now < expiresAt then return 'negative' end
  -- Nothing servable: wait for a live builder (a build, or a revalidation that outlived its
  -- stale window), or build from scratch.
  if liveBuilder then return 'building' end
  return 'build'
end

local decision = decide()
if decision == 'build' or decision == 'revalidate' then
  if decision == 'build' then
    -- A fresh build: nothing of the old entry is served any more.
    e.status, e.value, e.error, e.expiresAt, e.staleUntil = 'building', false, false, false, false
  end
  e.cache, e.key = cache, key
  e.builderOwner, e.builderToken, e.builderFence = owner, token, int(next_fence())
  e.builderUntil, e.updatedAt = int(now + leaseMs), int(now)
  cache_put(id, e)
end

local state = decision
if decision == 'revalidate' then state = 'stale' end
return ok({ state, decision == 'revalidate', redis.call('HGETALL', entryKey) })
