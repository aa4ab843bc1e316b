/** PLACEHOLDER of the Redis store's `audit` sub-port: replaced by its implementation. */
import type { AuditPort } from '../../core/ports/audit.ts';
import type { RedisContext } from './context.ts';

export function createAuditPort(_ctx: RedisContext): AuditPort {
  return new Proxy({} as AuditPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis audit.${String(method)} is not built yet`)),
  });
}
