/** PLACEHOLDER of the Redis store's `requests` sub-port: replaced by its implementation. */
import type { RequestsPort } from '../../core/ports/requests.ts';
import type { RedisContext } from './context.ts';

export function createRequestsPort(_ctx: RedisContext): RequestsPort {
  return new Proxy({} as RequestsPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis requests.${String(method)} is not built yet`)),
  });
}
