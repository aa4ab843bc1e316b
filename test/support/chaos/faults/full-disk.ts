/**
 * Full artifact disk: the filesystem store's byte limit (`artifacts.maxBytes`) nearly used up by
 * one object, so every `fault.write` attempt fails to write its artifact (ARTIFACTS_UNAVAILABLE,
 * retryable) and is retried with backoff; the health probe fails meanwhile. Then the object is
 * removed (space returns, as garbage collection would free it) and every run completes: none
 * lost, no stage effect twice, each publication the committed attempt's, nothing stuck.
 */
import { createFsArtifactStore, type FsArtifactStore } from '../../../../src/artifacts/fs-artifact-store.ts';
import { PipelineError } from '../../../../src/core/errors.ts';
import { join } from 'node:path';
import type { FaultReport, FaultScenario } from './index.ts';
import { countOutcome, reportOf, FAULT_STAGES, openFaultScene, waitFor, waitForRuns } from './fault-runs.ts';

const RUNS = 40;
/** Room for every run's artifact once the filler is gone (40 x 2 KiB), and more. */
const LIMIT_BYTES = 512 * 1024;
/** Left free while the disk is "full": less than one artifact. */
const LEFT_BYTES = 1_024;
/** Failed artifact writes to see before space returns: every run tried at least once, and retried. */
const FAILED_WRITES = RUNS * 2;

export const fullDiskScenario: FaultScenario = {
  name: 'full-disk',
  async run({ seed, store: kind, log }): Promise<FaultReport> {
    let artifacts: FsArtifactStore | undefined;
    const scene = await openFaultScene({
      name: 'full-disk',
      seed,
      kind,
      artifacts: (dir) => (artifacts = createFsArtifactStore({ root: join(dir, 'artifacts'), maxBytes: LIMIT_BYTES })),
    });
    try {
      const disk = artifacts!;
      const filler = await disk.put(Buffer.alloc(LIMIT_BYTES - LEFT_BYTES, 1));
      const probe = await disk.checkWritable!().then(
        () => 'ok',
        (err: unknown) => (err instanceof PipelineError ? err.code : String(err)),
      );
      log(`full-disk: limit ${LIMIT_BYTES} bytes, ${LEFT_BYTES} left; health probe says ${probe}; submitting ${RUNS} runs`);
      await scene.submit(RUNS);
      const sawFailures = await waitFor(() => scene.recorded.artifactWriteFailures >= FAILED_WRITES, 30_000);
      const failuresWhileFull = scene.recorded.artifactWriteFailures;
      const succeededWhileFull = (await scene.kiln.listRuns({ status: 'succeeded', limit: 1_000 })).length;
      log(`full-disk: ${failuresWhileFull} artifact writes failed while full (${succeededWhileFull} runs succeeded meanwhile); freeing space`);
      await disk.remove(filler.ref);
      await waitForRuns(scene.store, scene.runIds, 60_000);
      const outcome = await countOutcome(scene.store, scene.runIds, { stages: FAULT_STAGES, subjects: scene.subjects });
      const attempts = await Promise.all(scene.runIds.map((id) => scene.kiln.listAttempts(id)));
      const failed = attempts.flat();
      return reportOf('full-disk', scene.runIds.length, outcome, {
        probeWhileFull: probe,
        failedWritesWhileFull: failuresWhileFull,
        enoughFailuresSeen: sawFailures ? 'yes' : 'no',
        succeededWhileFull,
        failedAttempts: failed.length,
        failedAttemptsUnavailableTransient: failed.filter((a) => a.error.code === 'ARTIFACTS_UNAVAILABLE' && a.error.class === 'transient').length,
      });
    } finally {
      await scene.close();
    }
  },
};
