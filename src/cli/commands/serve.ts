/** `kiln serve`: the HTTP API and a worker in one process, on the configured store (SQLite by default). */
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import type { Logger } from '../../core/logger.ts';
import type { Store } from '../../core/ports/store.ts';
import { isLoopbackAddress } from '../../http/auth.ts';
import { buildApp } from '../../http/build-app.ts';
import { readCacheCounters } from '../../observe/cache-counters.ts';
import { describeStore } from '../../config/store-url.ts';
import { builtinRoutes } from '../../pipelines/index.ts';
import type { CliContext } from '../cli-context.ts';
import { openCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { parsePort } from './option-parsers.ts';

interface ServeOptions extends GlobalOptions {
  host?: string;
  port?: number;
  workerId?: string;
  /** False with `--no-worker`: API only, jobs run in separate `kiln worker` processes. */
  worker?: boolean;
}

async function serve(ctx: CliContext, options: ServeOptions): Promise<void> {
  // Listen for signals before anything slow, so a stop during start-up is still graceful.
  const shutdown = ctx.shutdownRequested();
  const flags = {
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
  };
  const rt = await openCommandRuntime(ctx, options, { flags, command: 'serve' });
  const { config, kiln, logger } = rt;
  const app = buildApp({
    kiln,
    metrics: rt.metrics,
    logger,
    bodyLimitBytes: config.http.bodyLimitBytes,
    requestTimeoutMs: config.http.requestTimeoutMs,
    routes: builtinRoutes,
    verifyTempGraceMs: config.worker.tempGraceMs,
    cacheStats: () => readCacheCounters(rt.metrics.registry),
    auth: { metrics: config.http.auth.metrics },
  });
  let url: string;
  try {
    url = await app.listen({ host: config.http.host, port: config.http.port });
  } catch (err) {
    await app.close();
    await rt.close();
    throw err;
  }
  const worker = options.worker === false ? undefined : rt.createWorker(options.workerId === undefined ? {} : { workerId: options.workerId });
  worker?.start();
  const where = { api: `${url}/v1`, dashboard: `${url}/dashboard`, metrics: `${url}/metrics` };
  logger.info(
    { url, ...where, worker_id: worker?.id ?? null, store: describeStore(config.store), pipelines: [...kiln.pipelines.keys()], traces: rt.tracing.endpoint ?? 'off' },
    `kiln serving on ${url} (API ${where.api}, dashboard ${where.dashboard}, metrics ${where.metrics})`,
  );

  await warnWithoutTokens(rt.store, app.server.address(), logger);

  const signal = await shutdown;
  logger.info({ signal, in_flight: worker?.inFlight() ?? 0, grace_ms: config.worker.shutdownGraceMs }, 'shutting down');
  // Stop claiming and stop accepting requests together; in-flight jobs get the grace period.
  await Promise.all([worker?.stop(config.worker.shutdownGraceMs), app.close()]);
  await rt.close();
  logger.info({ signal }, 'stopped');
}

/** A server listening beyond loopback with no API token refuses every /v1 route: say so at start. */
async function warnWithoutTokens(store: Store, address: string | AddressInfo | null, logger: Logger): Promise<void> {
  if (address === null || typeof address === 'string' || isLoopbackAddress(address.address)) return;
  if (await store.tokens.exist()) return;
  logger.warn(
    { host: address.address },
    'listening beyond loopback without any API token: every route but /healthz, /metrics and the dashboard page answers 401 until one is created with `kiln tokens create --tenant <tenant> --scopes read,submit`',
  );
}

/** Registers `kiln serve`. */
export function registerServeCommand(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the HTTP API and a worker (http://127.0.0.1:8080 and the SQLite store by default)')
    .option('--host <host>', 'listen address (env KILN_HOST or HOST; default 127.0.0.1)')
    .option('--port <port>', 'listen port, 0 = any free port (env KILN_PORT or PORT; default 8080)', parsePort)
    .option('--worker-id <id>', 'lease owner name of the embedded worker (default random)')
    .option('--no-worker', 'serve the API only; run jobs in separate `kiln worker` processes')
    .action((_opts: ServeOptions, cmd: Command) => serve(ctx, cmd.optsWithGlobals<ServeOptions>()));
}
