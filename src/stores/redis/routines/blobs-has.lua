-- blobs-has.lua: BlobsPort.has. Reads only.
-- Keys: the blob (lib-blobs.lua).
-- ARGV: [2] ref.
-- Result: true when the blob exists.

return ok(redis.call('EXISTS', k_blob(ARGV[2])) == 1)
