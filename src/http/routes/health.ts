/** `GET /healthz`: the process serves and its store answers. */
import type { FastifyPluginAsync } from 'fastify';
import { BackendUnavailableError, PipelineError } from '../../core/errors.ts';
import type { Kiln } from '../../engine/kiln-types.ts';

/** Options of {@link healthRoutes}. */
export interface HealthRoutesOptions {
  kiln: Kiln;
}

/** Registers `GET /healthz`: 200 `{status: 'ok', backend, time}`, or 503 `BACKEND_UNAVAILABLE`. */
export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (app, { kiln }) => {
  // Probes poll this often; only failures are worth a log line.
  app.get('/healthz', { logLevel: 'warn' }, async () => {
    let nowMs: number;
    try {
      nowMs = await kiln.backend.now();
    } catch (err) {
      if (err instanceof PipelineError && err.code === 'BACKEND_UNAVAILABLE') throw err;
      throw new BackendUnavailableError('the store did not answer', { cause: err });
    }
    return { status: 'ok', backend: kiln.backend.capabilities.name, time: new Date(nowMs).toISOString() };
  });
};
