-- reads-list-runs: runs matching the filters, newest first (ids sort by creation time), at most
-- `limit`, below the `before` cursor.
-- Keys: runs (every run id, lexicographic), run:<id>.
-- ARGV (optional ones '' when absent, '=' .. value when given): [2] pipeline, [3] status,
--   [4] subjectId, [5] tenant, [6] createdAfter (inclusive), [7] createdBefore (exclusive),
--   [8] lowest id the window can hold (inclusive), [9] id bound (exclusive: the cursor or the
--   window's end, whichever is lower), [10] limit.
-- Result: [flat Run hash, ...], newest first.
-- Cost: the runs of the id range are walked newest first, 200 at a time (walk_lex_desc), until
--   `limit` match: a selective filter (pipeline, status, subject, tenant) reads (five fields of)
--   every run of the range it skips. The range is bounded by the creation-time window (see
--   stores/shared/run-window.ts) and the cursor. subject:<pipeline>\0<subjectId> is not used:
--   it holds only the runs submitted with a subjectVersion.
-- Invariant: reads only.
local pipeline, status, subject, tenant = opt_arg(ARGV[2]), opt_arg(ARGV[3]), opt_arg(ARGV[4]), opt_arg(ARGV[5])
local after, before_time = opt_arg(ARGV[6]), opt_arg(ARGV[7])
after = after and tonumber(after)
before_time = before_time and tonumber(before_time)
local from, below = opt_arg(ARGV[8]), opt_arg(ARGV[9])
local limit = tonumber(ARGV[10])
local out = {}
if limit <= 0 then return ok(out) end

-- The run `id` (its flat hash) when it matches every filter, else nil.
local function matching(id)
  local f = redis.call('HMGET', k_run(id), 'pipeline', 'status', 'subjectId', 'tenant', 'createdAt')
  if not f[1] then return nil end
  if (pipeline and f[1] ~= pipeline) or (status and f[2] ~= status) or (subject and f[3] ~= subject) or (tenant and f[4] ~= tenant) then return nil end
  local created = tonumber(f[5])
  if (after and created < after) or (before_time and created >= before_time) then return nil end
  return redis.call('HGETALL', k_run(id))
end

walk_lex_desc(k('runs'), below and ('(' .. below) or '+', from and ('[' .. from) or '-', function(id)
  local run = matching(id)
  if run then out[#out + 1] = run end
  return #out >= limit
end)
return ok(out)
