/** `GET /metrics`: Prometheus text exposition. */
import type { FastifyPluginAsync } from 'fastify';
import type { RouteScope } from '../auth.ts';

/** What the route needs of the metrics registry (`src/observe/metrics.ts` provides it). */
export interface MetricsSource {
  /** Content-Type of the exposition format. */
  readonly contentType: string;
  render(): Promise<string>;
}

/** Options of {@link metricsRoutes}. */
export interface MetricsRoutesOptions {
  metrics: MetricsSource;
  /** Who may scrape: `public` (the default: Prometheus without a token) or a token scope (`http.auth.metrics: token` = admin: its series carry tenant labels). */
  scope?: RouteScope;
}

/** Registers `GET /metrics`. */
export const metricsRoutes: FastifyPluginAsync<MetricsRoutesOptions> = async (app, { metrics, scope = 'public' }) => {
  // Scraped every few seconds; a log line per scrape would drown everything else.
  app.get('/metrics', { logLevel: 'warn', config: { scope } }, async (_request, reply) => {
    const text = await metrics.render();
    return reply.header('content-type', metrics.contentType).send(text);
  });
};
