-- lib-requests.lua: the key of the `requests` sub-port (remembered client requests).
--
-- Keys (P = KEYS[1])
--   P..'request:'..scope.."\0"..key  hash  RequestRecord: scope, key, requestHash, value (JSON
--                                          text), createdAt. Written once, never changed
--                                          (deleted by retention, with its entry below).
--   P..'requests:created'  zset  scope.."\0"..key of every record, score createdAt: what
--                                retention walks (layout 4's migration step indexed the records stored before).

local function k_request(scope, key) return P .. 'request:' .. scope .. '\0' .. key end
local function k_requests_created() return P .. 'requests:created' end
