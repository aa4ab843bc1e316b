-- lib-locks.lua: the `locks` sub-port's own key and the writes every locks script shares. Loaded
-- after lib-keys.lua (see context.ts), whose helpers it uses.
--
-- Keys (P = KEYS[1]); with lib-keys.lua's P..'lock:'..key hash (owner, token, fence, acquiredAt,
-- expiresAt) and P..'locks' zset (lock keys, score expiresAt):
--   P..'locks:bykey'   zset  every lock key, score 0 (lexicographic: the listing order)
-- Invariant: a lock key is in both zsets exactly while its lock:<key> hash exists, and its
--   score in `locks` is the hash's expiresAt.

local function k_locks_bykey() return P .. 'locks:bykey' end

-- Sets the expiry of the lock on `key` (hash field and `locks` score together).
local function lock_expire(key, expiresAt)
  redis.call('HSET', k_lock(key), 'expiresAt', int(expiresAt))
  redis.call('ZADD', k('locks'), int(expiresAt), key)
end

-- Removes the lock on `key` and its index places.
local function lock_drop(key)
  redis.call('DEL', k_lock(key))
  redis.call('ZREM', k('locks'), key)
  redis.call('ZREM', k_locks_bykey(), key)
end
