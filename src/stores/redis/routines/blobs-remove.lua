-- blobs-remove.lua: BlobsPort.remove. The blob and its index entry in one script.
-- Keys: the blob and the blob index (lib-blobs.lua).
-- ARGV: [2] ref, [3] notModifiedAfter (ms, may be fractional) or '' for none.
-- Result: true when this call removed the blob; false when it was absent or written after
-- notModifiedAfter (a re-put made it live again).

local ref = ARGV[2]
local key = k_blob(ref)
local modifiedAt = redis.call('HGET', key, 'modifiedAt')
if not modifiedAt then return ok(false) end
if ARGV[3] ~= '' and tonumber(modifiedAt) > tonumber(ARGV[3]) then return ok(false) end
redis.call('DEL', key)
redis.call('ZREM', k_blobs(), ref)
return ok(true)
