/**
 * Runs `thread`-isolated stage handlers in a worker-thread pool (piscina), so a CPU-bound handler
 * never blocks the event loop that renews leases. Aborting a task terminates its thread, which
 * is the only way to stop a busy loop.
 */
import { Piscina } from 'piscina';
import { StageFailure } from '../core/errors.ts';
import type { JsonValue } from '../core/model.ts';
import type { StageModule, ThreadStageInput } from '../core/pipeline/define-pipeline.ts';
import type { StageErrorRecord } from '../core/model.ts';

type ThreadResult = { ok: true; output: JsonValue } | { ok: false; error: StageErrorRecord & { retryAfterMs?: number } };

/** A lazily started pool of worker threads. */
export interface ThreadPool {
  run(module: StageModule, input: ThreadStageInput, signal: AbortSignal): Promise<JsonValue>;
  close(): Promise<void>;
}

/** Turns a failure classified in the thread back into the error the executor classifies. */
function rebuildFailure(error: StageErrorRecord & { retryAfterMs?: number }): StageFailure {
  const options = { code: error.code, ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }) };
  if (error.class === 'permanent') return StageFailure.permanent(error.message, options);
  if (error.class === 'intervention') return StageFailure.intervention(error.message, options);
  return StageFailure.retryable(error.message, options);
}

/** Creates a pool of at most `maxThreads` threads; none start until the first task. */
export function createThreadPool(maxThreads: number): ThreadPool {
  let pool: Piscina | undefined;
  return {
    async run(module, input, signal) {
      pool ??= new Piscina({
        filename: new URL('./thread-entry.mjs', import.meta.url).href,
        minThreads: 0,
        maxThreads: Math.max(1, maxThreads),
        idleTimeout: 30_000,
      });
      const url = module.url instanceof URL ? module.url.href : new URL(module.url, 'file:///').href;
      const result = (await pool.run({ url, exportName: module.export ?? 'default', input }, { signal })) as ThreadResult;
      if (!result.ok) throw rebuildFailure(result.error);
      return result.output;
    },
    async close() {
      await pool?.destroy();
      pool = undefined;
    },
  };
}
