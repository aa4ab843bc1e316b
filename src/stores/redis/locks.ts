/** PLACEHOLDER of the Redis store's `locks` sub-port: replaced by its implementation. */
import type { LocksPort } from '../../core/ports/locks.ts';
import type { RedisContext } from './context.ts';

export function createLocksPort(_ctx: RedisContext): LocksPort {
  return new Proxy({} as LocksPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis locks.${String(method)} is not built yet`)),
  });
}
