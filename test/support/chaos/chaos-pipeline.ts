/**
 * `chaos.crash`, the pipeline the chaos harness submits (loaded by its workers with
 * `KILN_PIPELINES`): it passes every crash point of the worker. `write` stores an artifact whose
 * bytes name the run and the attempt (so an attempt killed after its write leaves a different,
 * unreferenced artifact), `publish` points the subject `chaos-<runId>` at it, `check` fails for
 * good when the input says `fail: true`, and then the compensations of `publish` and `write` run
 * (reverse order). Each handler awaits a little before and after its effect, so a crash at
 * `mid-handler` / `mid-rollback` lands while it runs.
 */
import { definePipeline, StageFailure, ValidationError, type JsonValue, type StageContext } from '../../../src/index.ts';

/** The pipeline's name. */
export const CHAOS_PIPELINE = 'chaos.crash';
/** The profile `publish` publishes under. */
export const CHAOS_PROFILE = 'chaos';

/** The subject a run publishes. */
export function chaosSubject(runId: string): string {
  return `chaos-${runId}`;
}

/** Input of `chaos.crash`. */
export interface ChaosInput {
  /** The harness's number for the run (its Idempotency-Key). */
  n: number;
  /** Fail `check` for good, so the compensations run. */
  fail: boolean;
}

function parseInput(raw: unknown): JsonValue {
  const input = raw as Partial<ChaosInput> | null;
  if (typeof input !== 'object' || input === null || !Number.isInteger(input.n) || typeof input.fail !== 'boolean') {
    throw new ValidationError('chaos.crash input must be { n: integer, fail: boolean }');
  }
  return { n: input.n as number, fail: input.fail };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const undo = (stage: string) => async (): Promise<JsonValue> => {
  await pause(3);
  return { undone: stage };
};

export default definePipeline({
  name: CHAOS_PIPELINE,
  version: 1,
  parseInput,
  // Short leases so killed work comes back quickly; attempts to spare (they count at claim, and a
  // job may be in the claimed batch of several killed workers).
  defaults: { leaseMs: 2_000, heartbeatMs: 400, maxAttempts: 100, backoff: { baseMs: 50, capMs: 500 } },
  stages: [
    {
      name: 'write',
      handler: async (ctx: StageContext) => {
        await pause(2);
        const bytes = new TextEncoder().encode(`chaos run ${ctx.run.id} attempt ${ctx.attempt}\n`);
        const { ref } = await ctx.artifacts.put(bytes, { mediaType: 'text/plain' });
        await pause(2);
        return { ref };
      },
      rollback: undo('write'),
    },
    {
      name: 'publish',
      handler: async (ctx: StageContext) => {
        await pause(2);
        const ref = (ctx.outputs.write as { ref: string }).ref;
        ctx.publish({ subjectId: chaosSubject(ctx.run.id), profile: CHAOS_PROFILE, artifactRef: ref, subjectVersion: 1 });
        return { published: ref };
      },
      rollback: undo('publish'),
    },
    {
      name: 'check',
      handler: async (ctx: StageContext) => {
        await pause(2);
        if ((ctx.input as unknown as ChaosInput).fail) throw StageFailure.permanent('chaos: this run fails at check', { code: 'CHAOS_FAIL' });
        return { checked: true };
      },
    },
  ],
});
