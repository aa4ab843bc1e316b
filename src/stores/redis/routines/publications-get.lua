-- publications-get.lua: PublicationsPort.get. Reads only.
-- Keys: pub:<subjectId> (lib-keys.lua), written by jobs.commit.
-- ARGV: [2] subject id, [3] profile.
-- Result: the stored JSON text {artifactRef, subjectVersion, fence, updatedAt} (numbers as
--   text), or null when absent; decoded by the client.

local stored = redis.call('HGET', k_pub(ARGV[2]), ARGV[3])
if not stored then return ok(nil) end
return ok(stored)
