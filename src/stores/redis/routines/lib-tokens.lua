-- lib-tokens.lua: the keys of the `tokens` sub-port (API tokens; the sha256 of each secret, never
-- the secret).
--
-- Keys (P = KEYS[1])
--   P..'token:'..id     hash  ApiToken: id, tenant, name (absent = null), scopes (comma-separated,
--                             canonical order), secretHash, last4, createdAt, expiresAt and
--                             revokedAt (absent = null). Never deleted; revokedAt is set once.
--   P..'tokens'         zset  every token id, score 0 (lexicographic = creation order)
--   P..'tokens:hash'    hash  secretHash -> token id (unique: a second token with one hash is refused)

local function k_token(id) return P .. 'token:' .. id end
local function k_tokens() return P .. 'tokens' end
local function k_token_hashes() return P .. 'tokens:hash' end
