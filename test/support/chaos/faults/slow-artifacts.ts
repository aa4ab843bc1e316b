/**
 * Slow artifact store: every artifact call waits longer than the `fault.write` stages' timeout, so
 * each attempt times out (STAGE_TIMEOUT, transient) and is retried; its handler, abandoned, still
 * writes its artifact late and asks to publish it, which must never land. Then the latency goes
 * away and every run completes: none lost, no stage effect twice, each publication the committed
 * attempt's, nothing stuck.
 */
import { join } from 'node:path';
import { createFsArtifactStore } from '../../../../src/artifacts/fs-artifact-store.ts';
import { withArtifactLatency, type Latency } from '../../../../src/engine/injected-latency.ts';
import type { FaultReport, FaultScenario } from './index.ts';
import { countOutcome, reportOf, FAULT_STAGES, faultPolicies, openFaultScene, waitFor, waitForRuns } from './fault-runs.ts';

const RUNS = 30;
const STAGE_TIMEOUT_MS = 150;
/** Well past the stage timeout: no attempt can finish while it lasts. */
const LATENCY_MS = 600;
/** Timeouts to see before the latency goes away: more than one round of every run. */
const TIMEOUTS = RUNS + 10;

export const slowArtifactsScenario: FaultScenario = {
  name: 'slow-artifacts',
  async run({ seed, store: kind, log }): Promise<FaultReport> {
    const latency: Latency = { ms: LATENCY_MS };
    const scene = await openFaultScene({
      name: 'slow-artifacts',
      seed,
      kind,
      artifacts: (dir) => withArtifactLatency(createFsArtifactStore({ root: join(dir, 'artifacts') }), latency),
      policies: faultPolicies({ timeoutMs: STAGE_TIMEOUT_MS }),
    });
    try {
      log(`slow-artifacts: ${LATENCY_MS} ms per artifact call, stage timeout ${STAGE_TIMEOUT_MS} ms; submitting ${RUNS} runs`);
      await scene.submit(RUNS);
      const sawTimeouts = await waitFor(() => scene.recorded.timeouts.length >= TIMEOUTS, 30_000);
      const timeoutsWhileSlow = scene.recorded.timeouts.length;
      const succeededWhileSlow = scene.recorded.executions.filter((e) => e.outcome === 'succeeded').length;
      log(`slow-artifacts: ${timeoutsWhileSlow} stage timeouts while slow (${succeededWhileSlow} attempts succeeded meanwhile); latency off`);
      latency.ms = 0;
      await waitForRuns(scene.store, scene.runIds, 60_000);
      const outcome = await countOutcome(scene.store, scene.runIds, { stages: FAULT_STAGES, subjects: scene.subjects });
      const failed = (await Promise.all(scene.runIds.map((id) => scene.kiln.listAttempts(id)))).flat();
      return reportOf('slow-artifacts', scene.runIds.length, outcome, {
        latencyMs: LATENCY_MS,
        stageTimeoutMs: STAGE_TIMEOUT_MS,
        timeoutsWhileSlow,
        enoughTimeoutsSeen: sawTimeouts ? 'yes' : 'no',
        succeededWhileSlow,
        failedAttempts: failed.length,
        failedAttemptsTimeoutTransient: failed.filter((a) => a.error.code === 'STAGE_TIMEOUT' && a.error.class === 'transient').length,
        abandonedHandlers: scene.recorded.abandoned.length,
      });
    } finally {
      await scene.close();
    }
  },
};
