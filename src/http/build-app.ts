/**
 * The HTTP API as a fastify instance, built from its dependencies and not yet listening, so tests
 * drive it with `app.inject()` and the CLI calls `listen`. It names no pipeline.
 */
import multipart from '@fastify/multipart';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from '../core/logger.ts';
import { TokenScope } from '../core/ports/tokens.ts';
import type { Kiln } from '../engine/kiln-types.ts';
import { installAuth, PUBLIC, type AuthOptions } from './auth.ts';
import { handleClientError, handleFrameworkError, installErrorEnvelope } from './error-envelope.ts';
import { installJsonBodyParser } from './json-body.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS, installRequestDeadline } from './request-deadline.ts';
import { healthRoutes } from './routes/health.ts';
import type { PipelineRoutes } from './pipeline-routes.ts';
import { artifactRoutes } from './routes/artifacts.ts';
import { cacheRoutes, type CacheStatsSource } from './routes/cache.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { deadLetterRoutes } from './routes/dead-letters.ts';
import { jobRoutes } from './routes/jobs.ts';
import { metricsRoutes, type MetricsSource } from './routes/metrics.ts';
import { queueRoutes } from './routes/queues.ts';
import { runRoutes } from './routes/runs.ts';
import { verifyRoutes } from './routes/verify.ts';
import { installRequestTracing } from './tracing.ts';
import { typeboxValidatorCompiler } from './typebox-validator.ts';

/** Largest accepted request body unless configured (`http.bodyLimitBytes`). */
export const DEFAULT_BODY_LIMIT_BYTES = 65_536;

/**
 * How long a client may take to send a whole request (headers and body), Node's own default: the
 * request deadline starts only once the body is in, so this is what ends a client that never
 * finishes its upload (408 REQUEST_TIMEOUT, see `handleClientError`; the connection is closed and
 * the partial temp file goes).
 */
export const REQUEST_RECEIVE_TIMEOUT_MS = 300_000;

/**
 * Longest path parameter fastify's router matches; a longer one is 400 VALIDATION_FAILED before any
 * schema runs (fastify's default, 100, would refuse ids the schemas allow). Above every parameter
 * schema's `maxLength`, so the schema names the field.
 */
export const MAX_PARAM_LENGTH = 1_000;

/** What {@link buildApp} needs. */
export interface AppDeps {
  kiln: Kiln;
  /** Rendered at `GET /metrics`. */
  metrics: MetricsSource;
  /** A pino instance or any {@link Logger}; omitted means no request logging. */
  logger?: Logger;
  bodyLimitBytes?: number;
  /**
   * A request not answered within this long gets 503 `STORE_UNAVAILABLE` with `Retry-After`,
   * so a store that hangs cannot hang clients. Counted from the moment the request body is in,
   * plus any wait a route documents (see request-deadline.ts). @default 10000
   */
  requestTimeoutMs?: number;
  /** Pipelines' own routes; each is mounted when its pipeline is registered with `kiln`. */
  routes?: readonly PipelineRoutes[];
  /** Default temp grace of `GET /v1/verify` (the reaper's `worker.tempGraceMs`). @default 1 h */
  verifyTempGraceMs?: number;
  /** This process's cache counters, for `GET /v1/cache/stats` (src/observe/cache-counters.ts); omitted: `[]`. */
  cacheStats?: CacheStatsSource;
  /**
   * API tokens (src/http/auth.ts): whether `/metrics` needs a token (`token`: the read scope) or
   * not (`public`, the default), and the verified-token cache's TTL and clocks (tests).
   */
  auth?: Omit<AuthOptions, 'tokens'> & { metrics?: MetricsAccess };
}

/** Who may scrape `/metrics` (kiln.yaml `http.auth.metrics`). */
export type MetricsAccess = 'public' | 'token';

/** Share of the request deadline `GET /v1/verify` may audit for; the rest is left to answer in. */
const VERIFY_BUDGET_SHARE = 0.8;

/**
 * fastify wants pino's full method set; kiln's Logger port has the common four. Missing levels
 * fold into the nearest one, so any Logger (pino or not) can be passed.
 */
function toFastifyLogger(logger: Logger): FastifyBaseLogger {
  const full = logger as Partial<FastifyBaseLogger> & Logger;
  if (typeof full.fatal === 'function' && typeof full.trace === 'function' && typeof full.level === 'string') {
    return full as FastifyBaseLogger;
  }
  const adapted = {
    level: 'info',
    debug: logger.debug.bind(logger),
    info: logger.info.bind(logger),
    warn: logger.warn.bind(logger),
    error: logger.error.bind(logger),
    fatal: logger.error.bind(logger),
    trace: logger.debug.bind(logger),
    silent: () => {},
    child: (bindings: Record<string, unknown>) => toFastifyLogger(logger.child(bindings)),
  };
  return adapted as unknown as FastifyBaseLogger;
}

/**
 * One info line per request once it is answered: method, url, status and duration; `trace_id`
 * comes with the request's logger (see tracing.ts). Installed after the tracing hooks, so the
 * line carries the trace id.
 */
function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ method: request.method, url: request.url, statusCode: reply.statusCode, durationMs: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
  });
}

/** Builds the API (routes, schemas, error envelope). Call `listen` or `inject` on the result. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    bodyLimit: deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    // fastify's default is no limit at all; the request deadline does not count the body's time.
    requestTimeout: REQUEST_RECEIVE_TIMEOUT_MS,
    ...(deps.logger ? { loggerInstance: toFastifyLogger(deps.logger) } : { logger: false }),
    // fastify's two lines per request ("incoming request", "request completed") give way to one.
    logController: new LogController({ disableRequestLogging: true }),
    // Errors of fastify's router (bad percent-encoding, an over-long parameter) answer kiln's envelope too.
    frameworkErrors: handleFrameworkError,
    // ... and so do requests Node's HTTP parser refuses (headers too large, a malformed request line, 408).
    clientErrorHandler: handleClientError,
    // Above every parameter's own schema limit (ids 200, queues 300): the schema, not the router, refuses a long value, naming the field.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  });
  // Only JSON is accepted; without this, text/plain bodies would reach the schema as strings
  // and fail as 400 instead of the truthful 415.
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);
  app.setValidatorCompiler(typeboxValidatorCompiler);
  installErrorEnvelope(app);
  // Before any route: these hooks wrap only routes registered after them.
  installRequestTracing(app);
  installRequestLog(app);
  // Before any route, like the hooks above: every route's declared scope is checked here.
  const requestTimeoutMs = deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const { metrics: metricsAccess = 'public', ...authOptions } = deps.auth ?? {};
  installAuth(app, { storeTimeoutMs: requestTimeoutMs, ...authOptions, tokens: deps.kiln.store.tokens });
  installRequestDeadline(app, requestTimeoutMs);

  // multipart/form-data for pipelines' upload routes (`request.file()`); file size limits are per route.
  void app.register(multipart, { throwFileSizeLimit: true, limits: { files: 1 } });
  void app.register(healthRoutes, { kiln: deps.kiln });
  void app.register(metricsRoutes, { metrics: deps.metrics, scope: metricsAccess === 'token' ? TokenScope.admin : PUBLIC });
  void app.register(runRoutes, { kiln: deps.kiln });
  void app.register(jobRoutes, { kiln: deps.kiln });
  void app.register(queueRoutes, { kiln: deps.kiln });
  const verifyBudgetMs = Math.max(1, Math.floor(requestTimeoutMs * VERIFY_BUDGET_SHARE));
  void app.register(verifyRoutes, {
    kiln: deps.kiln,
    budgetMs: verifyBudgetMs,
    ...(deps.verifyTempGraceMs === undefined ? {} : { tempGraceMs: deps.verifyTempGraceMs }),
  });
  void app.register(deadLetterRoutes, { kiln: deps.kiln });
  void app.register(cacheRoutes, { kiln: deps.kiln, ...(deps.cacheStats ? { cacheStats: deps.cacheStats } : {}) });
  void app.register(artifactRoutes, { kiln: deps.kiln });
  // The dashboard: static files only; it reads and acts through the /v1 routes above.
  void app.register(dashboardRoutes);
  for (const routes of deps.routes ?? []) {
    if (deps.kiln.pipelines.has(routes.pipeline)) void app.register(routes.plugin, { kiln: deps.kiln });
  }
  return app;
}
