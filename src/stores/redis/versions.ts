/** PLACEHOLDER of the Redis store's `versions` sub-port: replaced by its implementation. */
import type { VersionsPort } from '../../core/ports/versions.ts';
import type { RedisContext } from './context.ts';

export function createVersionsPort(_ctx: RedisContext): VersionsPort {
  return new Proxy({} as VersionsPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis versions.${String(method)} is not built yet`)),
  });
}
