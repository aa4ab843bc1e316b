-- tokens-get-by-hash.lua: TokensPort.getByHash. Reads only.
-- Keys: the hash index, then the token (lib-tokens.lua).
-- ARGV: [2] secretHash.
-- Result: the token's flat HGETALL (revoked and expired ones included), or null when unknown.

local id = redis.call('HGET', k_token_hashes(), ARGV[2])
if not id then return ok(nil) end
return ok(redis.call('HGETALL', k_token(id)))
