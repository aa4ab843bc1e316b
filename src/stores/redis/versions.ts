/**
 * The `versions` sub-port of the Redis store: counters that hand out 1, 2, 3, ... per
 * `(scope, key)`, one atomic INCR in a script (routines/versions-allocate.lua), race-free across
 * processes and hosts.
 */
import type { VersionsPort } from '../../core/ports/versions.ts';
import type { RedisContext } from './context.ts';

/** Race-free counters on Redis. */
export function createVersionsPort(ctx: RedisContext): VersionsPort {
  return ctx.port<VersionsPort>({
    allocate: async (scope, key) => Number(await ctx.call<string>('versions-allocate', [scope, key])),
  });
}
