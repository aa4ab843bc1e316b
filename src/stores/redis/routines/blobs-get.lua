-- blobs-get.lua: BlobsPort.get. Reads only.
-- Keys: the blob (lib-blobs.lua).
-- ARGV: [2] ref.
-- Result: a native array { bytes, mediaType } (no cjson: the bytes are binary), or nil (false)
-- when the blob is absent. The client calls it through ioredis's Buffer variant.

local found = redis.call('HMGET', k_blob(ARGV[2]), 'bytes', 'mediaType')
if not found[1] then return false end
return { found[1], found[2] }
