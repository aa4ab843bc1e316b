-- lib-requests.lua: the key of the `requests` sub-port (remembered client requests).
--
-- Keys (P = KEYS[1])
--   P..'request:'..scope.."\0"..key  hash  RequestRecord: scope, key, requestHash, value (JSON
--                                          text), createdAt. Written once, never changed.

local function k_request(scope, key) return P .. 'request:' .. scope .. '\0' .. key end
