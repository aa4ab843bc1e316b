-- lib-stats.lua: the stats sub-port's own keys (recordActivity writes them, queueActivity reads).
--   P..'activity'             zset   minutes that have counts: member int(minute), score minute  [stats]
--   P..'activity:'..minute    hash   'c:'..queue -> jobs completed, 'f:'..queue -> failed attempts
--                                    recorded in that minute (store clock)               [stats]
-- A minute is the epoch ms of its start; minutes older than the retention are removed (with their
-- hash) whenever activity is recorded.

local function k_activity_minute(minute) return P .. 'activity:' .. minute end
