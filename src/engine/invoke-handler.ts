/**
 * Calls a stage's code the way its definition and policy ask: an inline handler with the full
 * context, a module export inline (same thread) or in the worker-thread pool, or a rollback.
 */
import type { JsonValue } from '../core/model.ts';
import type { StageContext, StageModule, ThreadStageInput } from '../core/pipeline/define-pipeline.ts';
import type { PlannedStage } from './stage-plan.ts';
import type { ThreadPool } from './thread-pool.ts';

type ModuleExport = (input: ThreadStageInput, signal?: AbortSignal) => Promise<JsonValue> | JsonValue;

const moduleCache = new Map<string, Promise<ModuleExport>>();

/** Loads a stage module's export once per process. */
function loadExport(module: StageModule): Promise<ModuleExport> {
  const url = module.url instanceof URL ? module.url.href : module.url;
  const key = `${url}#${module.export ?? 'default'}`;
  let found = moduleCache.get(key);
  if (!found) {
    found = import(url).then((mod: Record<string, unknown>) => {
      const fn = mod[module.export ?? 'default'];
      if (typeof fn !== 'function') throw new TypeError(`${url} has no function export "${module.export ?? 'default'}"`);
      return fn as ModuleExport;
    });
    moduleCache.set(key, found);
  }
  return found;
}

/** Runs the code for `ctx.job` (stage or rollback) and returns its output. */
export async function invokeHandler(threads: ThreadPool, stage: PlannedStage, ctx: StageContext): Promise<unknown> {
  const { definition, policy } = stage;
  if (ctx.job.kind === 'rollback') {
    if (!definition.rollback) throw new TypeError(`stage ${definition.name} has no rollback handler`);
    return definition.rollback(ctx);
  }
  if (definition.handler) return definition.handler(ctx);
  if (!definition.module) throw new TypeError(`stage ${definition.name} has neither handler nor module`);
  const input: ThreadStageInput = {
    runId: ctx.run.id,
    jobId: ctx.job.id,
    stage: ctx.stage,
    attempt: ctx.attempt,
    input: ctx.input,
    outputs: { ...ctx.outputs },
    lock: ctx.lock === null ? null : { ...ctx.lock },
  };
  if (policy.isolation === 'thread') return threads.run(definition.module, input, ctx.signal);
  const fn = await loadExport(definition.module);
  return fn(input, ctx.signal);
}
