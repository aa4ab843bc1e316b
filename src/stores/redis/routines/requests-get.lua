-- requests-get.lua: RequestsPort.get. Reads only.
-- Keys: the record of (scope, key) (lib-requests.lua).
-- ARGV: [2] scope, [3] key.
-- Result: the record's flat HGETALL, or null when absent.

local flat = redis.call('HGETALL', k_request(ARGV[2], ARGV[3]))
if #flat == 0 then return ok(nil) end
return ok(flat)
