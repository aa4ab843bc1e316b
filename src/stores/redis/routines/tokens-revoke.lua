-- tokens-revoke.lua: TokensPort.revoke.
-- Keys: the token (lib-tokens.lua).
-- ARGV: [2] id.
-- Result: the token's flat HGETALL after the revoke; NOT_FOUND when the id is unknown.
-- Invariant: revokedAt is set once, by the first revoke (HSETNX), and never changed.

local key = k_token(ARGV[2])
if redis.call('EXISTS', key) == 0 then return fail('not_found', 'NOT_FOUND', 'token ' .. ARGV[2] .. ' not found', { what = 'token', id = ARGV[2] }) end
redis.call('HSETNX', key, 'revokedAt', int(now_ms()))
return ok(redis.call('HGETALL', key))
