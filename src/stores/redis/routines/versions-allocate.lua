-- versions-allocate.lua: VersionsPort.allocate.
-- Keys: the counter of (scope, key) (lib-versions.lua).
-- ARGV: [2] scope, [3] key.
-- Result: the new value as decimal text: 1 on first use, then 2, 3, ...
-- Invariant: INCR is atomic, so no value is handed out twice whatever the concurrency.

return ok(int(redis.call('INCR', k_version(ARGV[2], ARGV[3]))))
