-- lib-versions.lua: the key of the `versions` sub-port (race-free counters).
--
-- Keys (P = KEYS[1])
--   P..'version:'..scope.."\0"..key  string  the counter's last value handed out (absent = 0)

local function k_version(scope, key) return P .. 'version:' .. scope .. '\0' .. key end
