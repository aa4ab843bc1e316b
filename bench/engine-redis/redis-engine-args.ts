/**
 * Flags of `npm run bench -- engine --store redis`: kiln on the Redis store vs BullMQ on one
 * redis-server; the same flags as the PostgreSQL suite's.
 */
import { parseServerEngineArgs, type ServerEngineArgs } from '../engine-pg/pg-engine-args.ts';
import { REDIS_SYSTEMS, type RedisSystem } from './redis-bench-result.ts';

/** Flags of one Redis suite invocation. */
export type RedisEngineArgs = ServerEngineArgs<RedisSystem>;

/**
 * Parses `--store redis [--jobs 5000] [--chains 1000] [--concurrency 10] [--only kiln-redis,bullmq]
 * [--scenario noop,chains] [--cpu-prof] [--submit single|bulk] [--repeat N]`.
 */
export function parseRedisEngineArgs(argv: readonly string[]): RedisEngineArgs {
  return parseServerEngineArgs(argv, REDIS_SYSTEMS);
}
