/**
 * `demo.sleep`: three stages that each wait `delayMs` (honouring the abort signal) and can be
 * told to fail at one stage with a chosen error class. For trying kiln out and for tests.
 */
import { definePipeline, StageFailure, ValidationError, type JsonValue, type StageContext } from '../../index.ts';

/** Input of `demo.sleep`. */
export interface DemoSleepInput {
  delayMs: number;
  failAt?: 'prepare' | 'process' | 'finish';
  failWith?: 'retryable' | 'intervention' | 'permanent';
}

const STAGES = ['prepare', 'process', 'finish'] as const;
const FAILURES = ['retryable', 'intervention', 'permanent'] as const;
const MAX_DELAY_MS = 600_000;

function parseInput(raw: unknown): JsonValue {
  const problems: string[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ValidationError('input must be an object');
  const input = raw as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!['delayMs', 'failAt', 'failWith'].includes(key)) problems.push(`unknown field ${key}`);
  }
  const delayMs = input.delayMs ?? 0;
  if (typeof delayMs !== 'number' || !Number.isInteger(delayMs) || delayMs < 0 || delayMs > MAX_DELAY_MS) {
    problems.push(`delayMs must be an integer from 0 to ${MAX_DELAY_MS}`);
  }
  if (input.failAt !== undefined && !STAGES.includes(input.failAt as never)) problems.push(`failAt must be one of ${STAGES.join(', ')}`);
  if (input.failWith !== undefined && !FAILURES.includes(input.failWith as never)) problems.push(`failWith must be one of ${FAILURES.join(', ')}`);
  if (problems.length > 0) throw new ValidationError(`invalid demo.sleep input: ${problems.join('; ')}`, { details: { problems } });
  const out: Record<string, JsonValue> = { delayMs: delayMs as number };
  if (input.failAt !== undefined) out.failAt = input.failAt as string;
  if (input.failAt !== undefined) out.failWith = (input.failWith as string | undefined) ?? 'retryable';
  return out;
}

/** Waits `ms`, resolving early (and then throwing the abort reason) if the signal fires. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function sleepStage(stage: (typeof STAGES)[number]) {
  return async (ctx: StageContext): Promise<JsonValue> => {
    const input = ctx.input as unknown as DemoSleepInput;
    ctx.progress({ stage, startedAttempt: ctx.attempt });
    await sleep(input.delayMs, ctx.signal);
    if (input.failAt === stage) {
      const message = `demo failure at ${stage}`;
      if (input.failWith === 'permanent') throw StageFailure.permanent(message, { code: 'DEMO_FAILURE' });
      if (input.failWith === 'intervention') throw StageFailure.intervention(message, { code: 'DEMO_FAILURE' });
      throw StageFailure.retryable(message, { code: 'DEMO_FAILURE' });
    }
    return { stage, sleptMs: input.delayMs, attempt: ctx.attempt };
  };
}

/** The demo pipeline. Retries are quick so failures are visible within seconds. */
export const demoSleepPipeline = definePipeline({
  name: 'demo.sleep',
  version: 1,
  parseInput,
  defaults: { maxAttempts: 3, backoff: { baseMs: 200, capMs: 2_000 } },
  stages: STAGES.map((name) => ({ name, handler: sleepStage(name) })),
});
