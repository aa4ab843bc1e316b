-- blobs-put.lua: BlobsPort.put. The blob and its index entry in one script.
-- Keys: the blob and the blob index (lib-blobs.lua).
-- ARGV: [2] ref (checked by the client), [3] media type, [4] bytes (binary), [5] size.
-- Result: true. An existing blob keeps its bytes and media type; only modifiedAt moves to now.

local ref = ARGV[2]
local key = k_blob(ref)
local now = int(now_ms())
if redis.call('EXISTS', key) == 1 then
  redis.call('HSET', key, 'modifiedAt', now)
else
  redis.call('HSET', key, 'bytes', ARGV[4], 'mediaType', ARGV[3], 'size', ARGV[5], 'modifiedAt', now)
  redis.call('ZADD', k_blobs(), 0, ref)
end
return ok(true)
