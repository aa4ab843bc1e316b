/** PLACEHOLDER of the Redis store's `operator` sub-port: replaced by its implementation. */
import type { OperatorPort } from '../../core/ports/operator.ts';
import type { RedisContext } from './context.ts';

export function createOperatorPort(_ctx: RedisContext): OperatorPort {
  return new Proxy({} as OperatorPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis operator.${String(method)} is not built yet`)),
  });
}
