-- reads-list-attempts: the failed attempts of a run (stage and rollback jobs), in commit order.
-- Keys: attempts:<runId> (FailedAttempt JSON text, appended by the commits).
-- ARGV[2] = run id.
-- Result: [FailedAttempt JSON text, ...] (empty for an unknown run); the client parses them.
-- Invariant: reads only.
return ok(redis.call('LRANGE', k_attempts(ARGV[2]), 0, -1))
