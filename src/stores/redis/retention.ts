/**
 * The `retention` sub-port of the Redis store: each prune is ONE script
 * (routines/retention-prune.lua) that walks the finished:<status> indexes, deletes at most `limit`
 * expired runs with every key that is theirs and at most `limit` request records; `count` is
 * routines/retention-count.lua, which only reads.
 */
import type { PruneCounts, RetentionPolicy, RetentionPort } from '../../core/ports/retention.ts';
import { runPeriods } from '../shared/retention-periods.ts';
import type { RedisContext, ScriptArg } from './context.ts';

/** The (status, period) pairs of a policy as flat script arguments. */
function periodArgs(policy: RetentionPolicy): ScriptArg[] {
  return runPeriods(policy).flatMap(({ status, periodMs }) => [status, periodMs]);
}

/** Retention on Redis. */
export function createRetentionPort(ctx: RedisContext): RetentionPort {
  return ctx.port<RetentionPort>({
    prune: (policy, limit) => ctx.call<PruneCounts>('retention-prune', [limit, policy.requestsMs ?? '', ...periodArgs(policy)]),
    count: (policy) => ctx.call<PruneCounts>('retention-count', [policy.requestsMs ?? '', ...periodArgs(policy)]),
  });
}
