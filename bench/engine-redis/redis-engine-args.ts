/**
 * Flags of `npm run bench -- engine --store redis`: kiln on the Redis store vs BullMQ on one
 * redis-server; the same flags as the PostgreSQL suite's.
 */
import { positiveInt } from '../engine/engine-args.ts';
import { parseServerEngineArgs, type ServerEngineArgs } from '../engine-pg/pg-engine-args.ts';
import { REDIS_SYSTEMS, type RedisSystem } from './redis-bench-result.ts';

/** Flags of one Redis suite invocation. */
export interface RedisEngineArgs extends ServerEngineArgs<RedisSystem> {
  /**
   * Rounds: every system and scenario runs this many times, alternating, and the median round
   * is reported (on a shared machine one round is noise). @default 1
   */
  repeat: number;
}

/**
 * Parses `--store redis [--jobs 5000] [--chains 1000] [--concurrency 10] [--only kiln-redis,bullmq]
 * [--scenario noop,chains] [--cpu-prof] [--submit single|bulk] [--repeat N]`.
 */
export function parseRedisEngineArgs(argv: readonly string[]): RedisEngineArgs {
  const at = argv.indexOf('--repeat');
  const rest = at === -1 ? argv : [...argv.slice(0, at), ...argv.slice(at + 2)];
  return { ...parseServerEngineArgs(rest, REDIS_SYSTEMS), repeat: positiveInt('repeat', at === -1 ? undefined : argv[at + 1], 1) };
}
