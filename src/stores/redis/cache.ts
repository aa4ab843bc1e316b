/** PLACEHOLDER of the Redis store's `cache` sub-port: replaced by its implementation. */
import type { CachePort } from '../../core/ports/cache.ts';
import type { RedisContext } from './context.ts';

export function createCachePort(_ctx: RedisContext): CachePort {
  return new Proxy({} as CachePort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis cache.${String(method)} is not built yet`)),
  });
}
