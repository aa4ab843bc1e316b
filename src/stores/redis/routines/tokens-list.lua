-- tokens-list.lua: TokensPort.list. Reads only.
-- Keys: the token index, then each token (lib-tokens.lua).
-- ARGV: none.
-- Result: every token's flat HGETALL, oldest first (ids are time-ordered; the zset is by id).

local out = {}
for _, id in ipairs(redis.call('ZRANGE', k_tokens(), 0, -1)) do out[#out + 1] = redis.call('HGETALL', k_token(id)) end
return ok(out)
