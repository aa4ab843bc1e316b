-- artifact-refs-list.lua: ArtifactRefsPort.list, for garbage collection. Reads only; one script,
-- so one consistent view of everything it reads.
-- Keys: pubs and every pub:<subjectId> it names,
--   cache:entries and cache:entry:<id> (lib-cache.lua), runs, run:<id>, stages:<runId>,
--   stage:<runId>:<index> (lib-keys.lua).
-- ARGV: from [2], the run statuses whose input and stage outputs are still referenced
--   (REPLAYABLE_RUN_STATUSES of stores/shared/artifact-refs.ts).
-- Result: the refs found, unique, in no particular order (the client sorts them): the
--   artifactRef of every publication, and every match of ARTIFACT_REF_PATTERN ("sha256:" and
--   exactly 64 lowercase hex digits not followed by another hex digit) in the JSON text of
--   cache entry values (any status) and of the input and stage outputs of those runs.

local found, refs = {}, {}
local function add(ref)
  if not found[ref] then found[ref] = true; refs[#refs + 1] = ref end
end

-- The JSON text is scanned as written by the client, as the other stores scan theirs.
local function collect(doc)
  if not doc then return end
  local from = 1
  while true do
    local at = string.find(doc, 'sha256:', from, true)
    if not at then return end
    local hex = string.sub(doc, at + 7, at + 70)
    if #hex == 64 and not string.find(hex, '[^0-9a-f]') and not string.find(string.sub(doc, at + 71, at + 71), '%x') then
      add(string.sub(doc, at, at + 70))
      from = at + 71
    else
      from = at + 7
    end
  end
end

-- Publications: every subject's pub:<subjectId> hash.
for _, subject in ipairs(redis.call('ZRANGE', k('pubs'), 0, -1)) do
  local flat = redis.call('HGETALL', k_pub(subject))
  for i = 2, #flat, 2 do add(cjson.decode(flat[i]).artifactRef) end
end

-- Cache entries of every status.
for _, id in ipairs(redis.call('ZRANGE', k_cache_entries(), 0, -1)) do
  collect(redis.call('HGET', k_cache_entry(id), 'value'))
end

-- Runs that may still run or be replayed: their input and stage outputs.
local replayable = {}
for i = 2, #ARGV do replayable[ARGV[i]] = true end
for _, runId in ipairs(redis.call('ZRANGE', k('runs'), 0, -1)) do
  local run = redis.call('HMGET', k_run(runId), 'status', 'input')
  if run[1] and replayable[run[1]] then
    collect(run[2])
    for index = 0, redis.call('LLEN', k_stages(runId)) - 1 do
      collect(redis.call('HGET', k_stage(runId, index), 'output'))
    end
  end
end

return ok(refs)
