/** PLACEHOLDER of the Redis store's `reads` sub-port: replaced by its implementation. */
import type { ReadsPort } from '../../core/ports/reads.ts';
import type { RedisContext } from './context.ts';

export function createReadsPort(_ctx: RedisContext): ReadsPort {
  return new Proxy({} as ReadsPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis reads.${String(method)} is not built yet`)),
  });
}
