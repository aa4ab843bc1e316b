-- operator-set-queue-paused.lua: operator.setQueuePaused as one atomic script.
--
-- Keys (P = KEYS[1]): queues, paused, queues:operated.
-- ARGV[2]: queue; ARGV[3]: '1' to pause, '0' to resume.
-- Result: null. Invariant: the queue is known (in 'queues' and 'queues:operated') from then on,
--   paused or not.

redis.call('SADD', k('queues'), ARGV[2])
redis.call('SADD', k('queues:operated'), ARGV[2])
if ARGV[3] == '1' then redis.call('SADD', k('paused'), ARGV[2]) else redis.call('SREM', k('paused'), ARGV[2]) end
return ok(nil)
