/** PLACEHOLDER of the Redis store's `jobs` sub-port: replaced by its implementation. */
import type { JobsPort } from '../../core/ports/jobs.ts';
import type { RedisContext } from './context.ts';

export function createJobsPort(_ctx: RedisContext): JobsPort {
  return new Proxy({} as JobsPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis jobs.${String(method)} is not built yet`)),
  });
}
