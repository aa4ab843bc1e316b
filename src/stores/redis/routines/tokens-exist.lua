-- tokens-exist.lua: TokensPort.exist. Reads only.
-- Keys: the token index (lib-tokens.lua).
-- ARGV: none.
-- Result: true once any token was created (tokens are never deleted).

return ok(redis.call('EXISTS', k_tokens()) == 1)
