-- publications-list.lua: PublicationsPort.list. Reads only.
-- Keys: pub:<subjectId> (lib-keys.lua), written by jobs.commit.
-- ARGV: [2] subject id.
-- Result: the hash's flat HGETALL: profile, stored JSON text, ...; the client decodes and sorts.

return ok(redis.call('HGETALL', k_pub(ARGV[2])))
