/**
 * A deadline on every route handler. A store that stops answering (a dead database host, a
 * black-holed network, a pool waiting for a connection that never comes) must not hold clients
 * forever: past the deadline the request fails with 503 `STORE_UNAVAILABLE` and `Retry-After`
 * through the normal error envelope. The handler's late result, if any, is discarded.
 */
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import { StoreUnavailableError } from '../core/errors.ts';

/** Default of `AppDeps.requestTimeoutMs` (config `http.requestTimeoutMs`). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** `Retry-After` sent with a deadline failure: the store may be back by then. */
const RETRY_AFTER_MS = 1_000;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * `work`, or a `StoreUnavailableError` once `deadlineMs` passes. A late rejection of `work` is
 * swallowed here: the client already has its answer.
 */
function raceDeadline(work: PromiseLike<unknown>, deadlineMs: number, route: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        new StoreUnavailableError(`no answer within ${deadlineMs} ms (the store may be unavailable)`, {
          details: { route, timeoutMs: deadlineMs, retryAfterMs: RETRY_AFTER_MS },
        }),
      );
    }, deadlineMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * Wraps every route registered after this call (register it first) so its handler answers within
 * `deadlineMs`. Only promise-returning handlers are wrapped: a callback-style handler has no
 * promise to race, and kiln's routes are all async.
 */
export function installRequestDeadline(app: FastifyInstance, deadlineMs: number): void {
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    const name = `${String(route.method)} ${route.url}`;
    route.handler = function deadlineHandler(this: FastifyInstance, request, reply) {
      const result: unknown = handler.call(this, request, reply);
      return isThenable(result) ? raceDeadline(result, deadlineMs, name) : result;
    } as RouteHandlerMethod;
  });
}
