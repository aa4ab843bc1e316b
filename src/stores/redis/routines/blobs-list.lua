-- blobs-list.lua: BlobsPort.list. Reads only (one consistent view of every blob).
-- Keys: the blob index and every blob (lib-blobs.lua).
-- ARGV: none.
-- Result: a flat list ref, size, modifiedAt, ... (text), sorted by ref; bytes are not read.

local out = {}
for _, ref in ipairs(redis.call('ZRANGE', k_blobs(), 0, -1)) do
  local found = redis.call('HMGET', k_blob(ref), 'size', 'modifiedAt')
  if found[1] then
    out[#out + 1] = ref
    out[#out + 1] = found[1]
    out[#out + 1] = found[2]
  end
end
return ok(out)
