/**
 * What the jobs and operator scripts share on the client side: the JSON a script receives
 * (numbers as decimal text, JSON values as JSON text, so cjson never decodes a user value nor
 * prints a number), the run statuses the transition table allows, and the wake-up after a call.
 */
import { jobIdempotencyKey } from '../../../core/keys.ts';
import type { RunStatus, StageErrorRecord } from '../../../core/model.ts';
import type { JobSpec } from '../../../core/ports/jobs.ts';
import { RUN_TRANSITIONS } from '../../../core/run/transitions.ts';
import type { RedisContext } from '../context.ts';
import { listOf } from '../rows.ts';

/** Stands for the run id in an enqueued job's key; the scripts replace it (lib-jobs.lua). */
export const RUN_ID_PLACEHOLDER = '\u0001run\u0001';

/** A job spec as the scripts take it (see JOBS.enqueue in lib-jobs.lua). */
export interface ScriptJobSpec {
  id: string;
  stage: string;
  queue: string;
  kind: string;
  maxAttempts: string;
  priority: string;
  key: string;
}

/** `spec` with the id of the job it would create; its key names `runId` (default: the placeholder). */
export function scriptJobSpec(ctx: RedisContext, spec: JobSpec, runId = RUN_ID_PLACEHOLDER): ScriptJobSpec {
  return {
    id: ctx.ids.next('job'),
    stage: spec.stage,
    queue: spec.queue,
    kind: spec.kind,
    maxAttempts: String(spec.maxAttempts),
    priority: String(spec.priority),
    key: jobIdempotencyKey(runId, spec.stage, spec.kind),
  };
}

/** A stage error as JSON text: only the record's own fields. */
export function errorText(error: StageErrorRecord): string {
  const { class: errorClass, code, message } = error;
  return JSON.stringify({ class: errorClass, code, message } satisfies StageErrorRecord);
}

/** The statuses from which a run may move to `to`, comma-separated (an ARGV of the scripts). */
export function statusesInto(to: RunStatus): string {
  return (Object.keys(RUN_TRANSITIONS) as RunStatus[]).filter((from) => RUN_TRANSITIONS[from].includes(to)).join(',');
}

/** The terminal statuses (no move out), comma-separated. */
export const TERMINAL_STATUSES = (Object.keys(RUN_TRANSITIONS) as RunStatus[]).filter((s) => RUN_TRANSITIONS[s].length === 0).join(',');

/** A script answer that made jobs ready now: `wake` lists their queues. */
export interface Woken {
  wake: readonly string[] | Record<string, never>;
}

/** Wakes the queues a script made ready (after its call, as a hint). */
export function wakeAfter(ctx: RedisContext, answer: Woken): void {
  const queues = listOf(answer.wake);
  if (queues.length > 0) ctx.wake(queues);
}
