-- lib-reads.lua: what the reads, stats and audit scripts share (they only read the keys of
-- lib-keys.lua, except stats' own activity keys: see lib-stats.lua).
--
-- Lua compares strings with strcoll (Redis sets LC_COLLATE from its environment), which is not
-- the byte order every store lists in; so these scripts order ids and names with bytes_lt, and
-- seek id ranges with ZRANGEBYLEX (byte order as well).

-- True when a sorts before b in byte order.
local function bytes_lt(a, b)
  if a == b then return false end
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- An optional argument: '' is absent, '=' .. value is value (so '' stays a value one can pass).
local function opt_arg(text)
  if text == nil or text == '' then return nil end
  return string.sub(text, 2)
end

-- The `limit` smallest of the rows offered one by one (tables with a numeric `at` and a text
-- `id`), by at then id in byte order: a bounded max-heap, so a listing that must read many rows
-- keeps and compares few (most rows lose to the heap's top on `at` alone).
local function smallest_by_at_then_id(limit)
  local heap = {}
  local function lt(a, b)
    if a.at ~= b.at then return a.at < b.at end
    return bytes_lt(a.id, b.id)
  end
  local function swap(i, j) heap[i], heap[j] = heap[j], heap[i] end
  local function offer(row)
    local n = #heap
    if n < limit then
      heap[n + 1] = row
      local i = n + 1
      while i > 1 and lt(heap[math.floor(i / 2)], heap[i]) do
        swap(i, math.floor(i / 2))
        i = math.floor(i / 2)
      end
    elseif n > 0 and lt(row, heap[1]) then
      heap[1] = row
      local i = 1
      while true do
        local m, l, r = i, 2 * i, 2 * i + 1
        if l <= n and lt(heap[m], heap[l]) then m = l end
        if r <= n and lt(heap[m], heap[r]) then m = r end
        if m == i then break end
        swap(i, m)
        i = m
      end
    end
  end
  -- The rows kept, smallest first.
  local function sorted()
    table.sort(heap, lt)
    return heap
  end
  return offer, sorted
end

-- Walks the members of lexicographic zset `key` from `max` down to `min` (ZREVRANGEBYLEX bounds),
-- 200 at a time, calling visit(member) on each until it returns true.
local function walk_lex_desc(key, max, min, visit)
  while true do
    local members = redis.call('ZREVRANGEBYLEX', key, max, min, 'LIMIT', 0, 200)
    for _, member in ipairs(members) do
      if visit(member) then return end
    end
    if #members < 200 then return end
    max = '(' .. members[#members]
  end
end
