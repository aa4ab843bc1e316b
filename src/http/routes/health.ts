/** `GET /healthz`: the process serves, its store answers and its artifact store can write. */
import type { FastifyPluginAsync } from 'fastify';
import { ArtifactsUnavailableError, StoreUnavailableError, PipelineError } from '../../core/errors.ts';
import type { Kiln } from '../../engine/kiln-types.ts';
import { access, PUBLIC } from '../auth.ts';

/** Options of {@link healthRoutes}. */
export interface HealthRoutesOptions {
  kiln: Kiln;
  /** How long one artifact write probe's answer is reused (probes poll often). @default 2000 */
  artifactCheckTtlMs?: number;
}

/** Default of `artifactCheckTtlMs`. */
export const DEFAULT_ARTIFACT_CHECK_TTL_MS = 2_000;

/**
 * Registers `GET /healthz`: 200 `{status: 'ok', store, artifacts: 'ok', time}`, 503
 * `STORE_UNAVAILABLE` when the store does not answer, or 503 `ARTIFACTS_UNAVAILABLE` when a small
 * probe write to the artifact store fails (a full or read-only disk: every upload and every stage
 * output would fail). The probe runs at most once per `artifactCheckTtlMs`, shared by concurrent
 * requests.
 */
export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (app, { kiln, artifactCheckTtlMs = DEFAULT_ARTIFACT_CHECK_TTL_MS }) => {
  let probe: { at: number; result: Promise<void> } | undefined;
  const checkArtifacts = (): Promise<void> => {
    const check = kiln.artifacts.checkWritable;
    if (!check) return Promise.resolve();
    const now = performance.now();
    if (!probe || now - probe.at >= artifactCheckTtlMs) {
      const result = check.call(kiln.artifacts).catch((err: unknown) => {
        throw err instanceof PipelineError ? err : new ArtifactsUnavailableError('the artifact store failed a probe write', { cause: err });
      });
      // Observed here so a cached failure never counts as an unhandled rejection.
      result.catch(() => undefined);
      probe = { at: now, result };
    }
    return probe.result;
  };

  // Probes poll this often; only failures are worth a log line.
  app.get('/healthz', { logLevel: 'warn', config: access(PUBLIC) }, async () => {
    let nowMs: number;
    try {
      nowMs = await kiln.store.now();
    } catch (err) {
      if (err instanceof PipelineError && err.code === 'STORE_UNAVAILABLE') throw err;
      throw new StoreUnavailableError('the store did not answer', { cause: err });
    }
    await checkArtifacts();
    return { status: 'ok', store: kiln.store.capabilities.name, artifacts: 'ok', time: new Date(nowMs).toISOString() };
  });
};
