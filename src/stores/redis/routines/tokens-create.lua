-- tokens-create.lua: TokensPort.create.
-- Keys: the token, the token index and the hash index (lib-tokens.lua).
-- ARGV: [2] id, [3] tenant, [4] '1' when a name follows, else '0', [5] name, [6] scopes (comma
--   text), [7] secretHash, [8] last4, [9] expiresAt ('' = never).
-- Result: the stored token's flat HGETALL.
-- Invariant: one token per secret hash (checked and written in one script); createdAt is the
--   store clock; the token is in 'tokens' and 'tokens:hash' exactly when its hash exists.

local id, hash = ARGV[2], ARGV[7]
if redis.call('HEXISTS', k_token_hashes(), hash) == 1 then
  return fail('validation', 'VALIDATION_FAILED', 'a token with this secret hash exists')
end
local key = k_token(id)
redis.call('HSET', key, 'id', id, 'tenant', ARGV[3], 'scopes', ARGV[6], 'secretHash', hash, 'last4', ARGV[8], 'createdAt', int(now_ms()))
if ARGV[4] == '1' then redis.call('HSET', key, 'name', ARGV[5]) end
if ARGV[9] ~= '' then redis.call('HSET', key, 'expiresAt', ARGV[9]) end
redis.call('ZADD', k_tokens(), 0, id)
redis.call('HSET', k_token_hashes(), hash, id)
return ok(redis.call('HGETALL', key))
