/**
 * A deadline on every route handler. A store that stops answering (a dead database host, a
 * black-holed network, a pool waiting for a connection that never comes) must not hold clients
 * forever: past the deadline the request fails with 503 `STORE_UNAVAILABLE` and `Retry-After`
 * through the normal error envelope. The handler's late result, if any, is discarded.
 *
 * The deadline bounds the server's own work, not the client's pace or a wait the client asked for:
 * - its clock starts once the request body is in (a streamed upload is read by the handler; the
 *   time the client takes to send it never counts; the server's `requestTimeout`, set in
 *   build-app.ts, bounds a client that never finishes);
 * - a route may extend its own deadline by a wait it documents ({@link extendRequestDeadline}:
 *   the QR routes add their `wait`), so the deadline is that wait plus the normal deadline.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { StoreUnavailableError } from '../core/errors.ts';

/** Default of `AppDeps.requestTimeoutMs` (config `http.requestTimeoutMs`). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** `Retry-After` sent with a deadline failure: the store may be back by then. */
const RETRY_AFTER_MS = 1_000;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** One request's deadline: a budget that starts counting once the body is in. */
interface Deadline {
  extend(ms: number): void;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's deadline, once its route's handler started (see {@link installRequestDeadline}). */
    kilnDeadline: Deadline | null;
  }
}

/**
 * Adds `ms` to the deadline of `request` (a route's documented wait, such as the QR `wait`). A
 * request without a deadline (a route registered before it was installed) is left as it is.
 */
export function extendRequestDeadline(request: FastifyRequest, ms: number): void {
  if (Number.isFinite(ms) && ms > 0) request.kilnDeadline?.extend(ms);
}

/** True when the request declares no body (no `Transfer-Encoding`, no or zero `Content-Length`). */
function declaresNoBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] === undefined && (length === undefined || Number(length) === 0);
}

/** Calls `onIn` once the body of `raw` has been received in full (at once if it already has). */
function whenBodyIn(raw: IncomingMessage, onIn: () => void): () => void {
  if (raw.complete || raw.readableEnded || declaresNoBody(raw)) {
    onIn();
    return () => {};
  }
  raw.once('end', onIn);
  return () => raw.off('end', onIn);
}

/**
 * Registers the deadline of `request` (so its handler can extend it from its first line) and
 * returns what races the handler's promise against it: `work`, or a `StoreUnavailableError` once
 * `deadlineMs` (plus any extension) has passed since the body was in. A late rejection of `work`
 * is swallowed here: the client already has its answer.
 */
function openDeadline(request: FastifyRequest, deadlineMs: number, route: string): (work: PromiseLike<unknown>) => Promise<unknown> {
  let budgetMs = deadlineMs;
  let startedAt: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let onExpire: (() => void) | undefined;
  const arm = () => {
    if (startedAt === undefined || onExpire === undefined) return;
    clearTimeout(timer);
    timer = setTimeout(onExpire, Math.max(0, startedAt + budgetMs - Date.now()));
  };
  request.kilnDeadline = {
    extend(ms) {
      budgetMs += ms;
      arm();
    },
  };
  return (work) =>
    new Promise((resolve, reject) => {
      let settled = false;
      let stopWaiting = () => {};
      const settle = (then: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        stopWaiting();
        then();
      };
      onExpire = () =>
        settle(() =>
          reject(
            new StoreUnavailableError(`no answer within ${budgetMs} ms (the store may be unavailable)`, {
              details: { route, timeoutMs: budgetMs, retryAfterMs: RETRY_AFTER_MS },
            }),
          ),
        );
      work.then(
        (value) => settle(() => resolve(value)),
        (err: unknown) => settle(() => reject(err)),
      );
      stopWaiting = whenBodyIn(request.raw, () => {
        startedAt = Date.now();
        arm();
      });
    });
}

/**
 * Wraps every route registered after this call (register it first) so its handler answers within
 * `deadlineMs` of its body being in. Only promise-returning handlers are wrapped: a callback-style
 * handler has no promise to race, and kiln's routes are all async.
 */
export function installRequestDeadline(app: FastifyInstance, deadlineMs: number): void {
  app.decorateRequest('kilnDeadline', null);
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    const name = `${String(route.method)} ${route.url}`;
    route.handler = function deadlineHandler(this: FastifyInstance, request, reply) {
      const race = openDeadline(request, deadlineMs, name);
      const result: unknown = handler.call(this, request, reply);
      return isThenable(result) ? race(result) : result;
    } as RouteHandlerMethod;
  });
}
