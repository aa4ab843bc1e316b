/** `GET /healthz`: the process serves and its store answers. */
import type { FastifyPluginAsync } from 'fastify';
import { StoreUnavailableError, PipelineError } from '../../core/errors.ts';
import type { Kiln } from '../../engine/kiln-types.ts';

/** Options of {@link healthRoutes}. */
export interface HealthRoutesOptions {
  kiln: Kiln;
}

/** Registers `GET /healthz`: 200 `{status: 'ok', store, time}`, or 503 `STORE_UNAVAILABLE`. */
export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (app, { kiln }) => {
  // Probes poll this often; only failures are worth a log line.
  app.get('/healthz', { logLevel: 'warn' }, async () => {
    let nowMs: number;
    try {
      nowMs = await kiln.store.now();
    } catch (err) {
      if (err instanceof PipelineError && err.code === 'STORE_UNAVAILABLE') throw err;
      throw new StoreUnavailableError('the store did not answer', { cause: err });
    }
    return { status: 'ok', store: kiln.store.capabilities.name, time: new Date(nowMs).toISOString() };
  });
};
