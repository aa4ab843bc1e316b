/** PLACEHOLDER of the Redis store's `publications` sub-port: replaced by its implementation. */
import type { PublicationsPort } from '../../core/ports/publications.ts';
import type { RedisContext } from './context.ts';

export function createPublicationsPort(_ctx: RedisContext): PublicationsPort {
  return new Proxy({} as PublicationsPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis publications.${String(method)} is not built yet`)),
  });
}
