/** PLACEHOLDER of the Redis store's `stats` sub-port: replaced by its implementation. */
import type { StatsPort } from '../../core/ports/stats.ts';
import type { RedisContext } from './context.ts';

export function createStatsPort(_ctx: RedisContext): StatsPort {
  return new Proxy({} as StatsPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis stats.${String(method)} is not built yet`)),
  });
}
